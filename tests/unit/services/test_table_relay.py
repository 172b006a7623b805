"""The outbox relay's bookkeeping of the fast path, without NATS: what it remembers as
acknowledged, and when it forgets it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from president.servicekit.nats import Subjects
from president.services.table import relay as relay_module
from president.services.table.relay import CONSUMER, FastAcked, OutboxRelay
from president.store import EventStore, NewEvent, Position, StoredEvent


def _stored(stream: str, version: int, row: int) -> StoredEvent:
    return StoredEvent(stream, version, "t", b"", {}, Position(0, row), "h", "p")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    """An event store on a SQLite file of its own."""
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as opened:
        yield opened


def test_fast_acked_entries_go_once_the_position_passes_them() -> None:
    acked = FastAcked(limit=3)
    first, second, third = (_stored("table-a", v, v) for v in (1, 2, 3))
    for stored in (first, second, third):
        acked.add(stored)
    assert acked.full
    assert acked.take(second) and not acked.take(second)  # counted as sent once
    acked.passed(Position(0, 2))  # another relay, or the loop, passed the first two
    assert len(acked) == 1 and not acked.take(first) and not acked.full
    acked.add(_stored("table-b", 1, 2))  # acknowledged after the position passed it
    assert len(acked) == 1
    acked.passed(Position(0, 1))  # a stale position changes nothing
    assert acked.take(third) and len(acked) == 0


async def test_the_relay_forgets_fast_acked_events_it_did_not_read(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[tuple[str, int]] = []

    async def publish(
        _js: object,
        _subjects: object,
        stored: StoredEvent,
        _timeout: float | None = None,
        _signer: object = None,
    ) -> None:
        sent.append((stored.stream_id, stored.version))

    monkeypatch.setattr(relay_module.jetstream, "publish", publish)
    relay = OutboxRelay(store, Subjects(), "nats://unused")
    relay._js, relay._loop = object(), asyncio.get_running_loop()  # type: ignore[assignment]

    def append(version: int) -> StoredEvent:
        new = NewEvent("t", b"x")
        return store.append("table-r", version - 1, [new], f"c{version}").events[0]

    # The loop published an event before the fast path recorded it.
    first = append(1)
    await relay.drain()
    relay._fast_acked.add(first)
    assert len(relay._fast_acked) == 0
    # Another relay moved the position over a fast-acked event this relay never read.
    second = append(2)
    relay._fast_acked.add(second)
    store.process_batch(CONSUMER, lambda _events, _connection: None, limit=10)
    await relay.drain()
    assert len(relay._fast_acked) == 0
    # Its own batch counts a fast-acked event as sent.
    third = append(3)
    relay._fast_acked.add(third)
    await relay.drain()
    assert sent == [("table-r", 1)] and len(relay._fast_acked) == 0
