"""The outbox relay's fast path agrees with its loop alone: the same messages, in the same
order, with the same Msg-Ids (real NATS, real SQLite stores)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from pathlib import Path

import nats

from president.events.v1 import events_pb2 as epb
from president.servicekit.nats import Subjects
from president.services.table.relay import OutboxRelay
from president.store import EventStore, NewEvent

AT = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


def reaction(n: int) -> NewEvent:
    message = epb.ReactionShown(seat=n % 4, reaction=f"r{n}")
    return NewEvent.from_message(message, {"actor": "test"})


async def relayed(url: str, store: EventStore, *, fast: bool) -> list[tuple[str, bytes]]:
    """Append the same commands to three tables, relay them, and read JetStream back: each
    message's Msg-Id and data, in the stream's order."""
    run = uuid.uuid4().hex[:8]
    subjects = Subjects(prefix=f"agree{run}.events.table", stream=f"AGREE_TEST_{run}")
    relay = OutboxRelay(store, subjects, url, poll_seconds=0.05)
    tasks = [asyncio.create_task(relay.run())]
    if fast:
        tasks.append(asyncio.create_task(relay.run_fast_path()))
    client = await nats.connect(url)
    try:
        while relay._js is None:
            await asyncio.sleep(0.02)
        versions = {f"table-{t}": 0 for t in range(3)}
        for n in range(30):
            stream = f"table-{n % 3}"
            events = [reaction(n)] if n % 4 else [reaction(n), reaction(n + 100)]
            result = store.append(stream, versions[stream], events, f"c{n}", time=AT)
            versions[stream] = result.last_version
            if fast:
                relay.committed(result)
            else:
                relay.wake()
            if n % 7 == 0:
                await asyncio.sleep(0.01)  # some appends go out alone, some together
        total = sum(versions.values())
        js = client.jetstream()
        subscription = await js.subscribe(subjects.all_tables, ordered_consumer=True)
        seen = []
        for _ in range(total):
            message = await subscription.next_msg(timeout=10)
            seen.append(((message.headers or {}).get("Nats-Msg-Id", ""), message.data))
        await subscription.unsubscribe()
        await asyncio.sleep(0.3)
        info = await js.stream_info(subjects.stream)
        assert info.state.messages == total  # nothing published twice
        await js.delete_stream(subjects.stream)
        return seen
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await relay.close(0.5)
        await client.close()


def test_the_fast_path_publishes_what_the_loop_alone_publishes(
    nats_url: str, tmp_path: Path
) -> None:
    runs = {}
    for fast in (True, False):
        with EventStore.from_url(f"sqlite:///{tmp_path / f'{fast}.db'}", migrate=True) as store:
            runs[fast] = asyncio.run(relayed(nats_url, store, fast=fast))
    assert len(runs[True]) == 38  # 30 commands, 8 of them of two events
    assert runs[True] == runs[False]
