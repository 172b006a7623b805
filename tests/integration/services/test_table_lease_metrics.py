"""Lease churn as ``president_table_leases_total`` counts it (the LeaseChurn alert), on the
real NATS key-value bucket: a lease taken, taken over from a silent holder, and found lost at
the old holder's next renewal."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import nats
from prometheus_client import REGISTRY

from president.services.table.leases import Leases


def count(event: str) -> float:
    return REGISTRY.get_sample_value("president_table_leases_total", {"event": event}) or 0.0


async def ready(leases: Leases) -> asyncio.Task[None]:
    task = asyncio.create_task(leases.run())
    for _ in range(100):
        if leases._kv is not None:
            return task
        await asyncio.sleep(0.05)
    raise AssertionError("the lease bucket did not open")


async def test_taken_taken_over_and_lost_leases_are_counted(nats_url: str) -> None:
    bucket = f"leases_test_{uuid.uuid4().hex[:8]}"
    first = Leases(nats_url, bucket, "127.0.0.1:1", ttl_seconds=30.0)
    second = Leases(nats_url, bucket, "127.0.0.1:2", ttl_seconds=30.0)
    tasks = [await ready(first), await ready(second)]
    before = {event: count(event) for event in ("taken", "taken_over", "lost")}
    try:
        assert await first.owner("table-1") == first.address
        assert await second.owner("table-1") == first.address  # held: forwarded, not taken
        await second.take_over("table-1")  # the holder did not answer
        await first._renew()  # the old holder finds its lease gone
        assert await first.owner("table-1") == second.address
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await first.close()
        await second.close()
        client = await nats.connect(nats_url)
        with contextlib.suppress(Exception):
            await client.jetstream().delete_stream(f"KV_{bucket}")
        await client.close()
    assert {event: count(event) - before[event] for event in before} == {
        "taken": 1,
        "taken_over": 1,
        "lost": 1,
    }
