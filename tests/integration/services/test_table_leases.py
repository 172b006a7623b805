"""A lease holder that cannot reach its store gives its tables up (real NATS).

Found by ``make cluster-chaos``'s "holder cut from postgres": the holder,
cut from the database but not from NATS, kept renewing its leases while
every command to its tables failed, so they stood still for the whole cut.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time

import nats

from president.services.table.leases import Leases
from president.services.table.store_probe import StoreProbe
from tests.support.servers import nats_url  # noqa: F401

TTL = 3.0


async def test_a_holder_cut_from_its_store_gives_its_leases_to_another_replica(
    nats_url: str,  # noqa: F811
) -> None:
    bucket = f"LEASE_TEST_{secrets.token_hex(4).upper()}"
    reached = [True]
    cut = Leases(nats_url, bucket, "10.0.0.1:1", TTL, store_reached=lambda: reached[0])
    other = Leases(nats_url, bucket, "10.0.0.2:1", TTL)
    tasks = [asyncio.create_task(leases.run()) for leases in (cut, other)]
    try:
        while cut._kv is None or other._kv is None:
            await asyncio.sleep(0.05)
        assert await cut.owner("t1") == cut.address
        other.forget("t1")
        assert await other.owner("t1") == cut.address
        reached[0] = False  # the database is away from the holder
        given_back = time.monotonic()
        while True:  # given back at the next renewal, not when the lease runs out
            other.forget("t1")
            if await other.owner("t1") == other.address:
                break
            assert time.monotonic() - given_back < TTL * 2 / 3, "the lease was not given back"
            await asyncio.sleep(0.1)
        cut.forget("t1")
        assert await cut.owner("t1") == other.address  # and it forwards to the new holder
        assert await cut.owner("t2") == cut.address  # a free table: served here, not taken
        other.forget("t2")
        assert await other.owner("t2") == other.address
        reached[0] = True  # back: it takes tables again as calls come
        assert await cut.owner("t3") == cut.address
        other.forget("t3")
        assert await other.owner("t3") == cut.address
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await cut.close()
        await other.close()
        client = await nats.connect(nats_url)
        await client.jetstream().delete_key_value(bucket)
        await client.close()


async def test_the_probe_says_the_store_is_away_while_a_read_hangs() -> None:
    hanging, released = threading.Event(), threading.Event()
    hung: list[float] = []

    def read() -> None:
        if hanging.is_set():
            hung.append(time.monotonic())
            released.wait(10)  # a connection cut without a word: the read hangs

    probe = StoreProbe(read, 0.05)
    task = asyncio.create_task(probe.run())
    try:
        await asyncio.sleep(0.3)
        assert probe.reached_within(0.2)
        hanging.set()
        await asyncio.sleep(0.6)
        assert not probe.reached_within(0.4)
        assert len(hung) == 1  # one read at a time: the hung one holds only its thread
        released.set()
        await asyncio.sleep(0.3)
        assert probe.reached_within(0.2)
    finally:
        released.set()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
