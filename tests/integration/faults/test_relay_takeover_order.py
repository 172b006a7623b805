"""JetStream keeps each table's order after a lease takeover: the new holder's relay does not
publish its own new events (the fast path) before those the dead holder committed and never
published (real NATS, real SQLite store; the dead holder is a store it appended to and a relay
it never ran)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import nats

from president.events.v1 import events_pb2 as epb
from president.servicekit.nats import Subjects
from president.services.table.relay import OutboxRelay
from president.store import EventStore, NewEvent


def reaction(version: int) -> NewEvent:
    message = epb.ReactionShown(seat=0, reaction=f"r{version}")
    return NewEvent.from_message(message, {"actor": "test"})


async def published_versions(url: str, subjects: Subjects, count: int) -> list[int]:
    client = await nats.connect(url)
    try:
        js = client.jetstream()
        subscription = await js.subscribe(subjects.all_tables, ordered_consumer=True)
        seen = []
        for _ in range(count):
            message = await subscription.next_msg(timeout=10)
            seen.append(epb.EventEnvelope.FromString(message.data).version)
        await subscription.unsubscribe()
        await js.delete_stream(subjects.stream)
        return seen
    finally:
        await client.close()


async def takeover(url: str, tmp_path: Path) -> list[int]:
    run = uuid.uuid4().hex[:8]
    subjects = Subjects(prefix=f"order{run}.events.table", stream=f"ORDER_TEST_{run}")
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as store:
        # The new holder's relay, whose loop is behind (as under load): it polls rarely.
        relay = OutboxRelay(store, subjects, url, poll_seconds=30.0)
        loop = asyncio.create_task(relay.run())
        fast = asyncio.create_task(relay.run_fast_path())
        try:
            while relay._js is None:  # connected, nothing to relay yet
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            # The dead holder committed versions 1-5 and died before publishing them.
            for version in range(1, 6):
                store.append("table-t", version - 1, [reaction(version)], f"dead-{version}")
            # The new holder's first command: committed here, handed to the fast path.
            relay.committed(store.append("table-t", 5, [reaction(6)], "new-6"))
            return await published_versions(url, subjects, 6)
        finally:
            for task in (loop, fast):
                task.cancel()
            await asyncio.gather(loop, fast, return_exceptions=True)
            await relay.close(0.5)


def test_the_new_holder_publishes_after_the_dead_holders_events(
    nats_url: str, tmp_path: Path
) -> None:
    assert asyncio.run(takeover(nats_url, tmp_path)) == [1, 2, 3, 4, 5, 6]
