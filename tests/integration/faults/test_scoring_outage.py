"""Scoring never acknowledges an event it failed to apply: with its database down (a
PostgreSQL of the test's own, stopped), the table's last events are refused for
acknowledgement and move no progress; once it is back they are applied exactly once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from president.events.v1 import events_pb2 as pb
from president.hosting.streams import stream_id
from president.services.scoring.consumer import Consumer
from president.services.scoring.store import ScoringStore
from president.store import EventStore, migrate
from tests.integration.services.test_scoring_store import bot_games
from tests.support.private_postgres import PrivatePostgres


class NoHistory:
    """A history port that must not be needed (the events come in order)."""

    async def read_events(
        self, table_id: str, after_version: int, limit: int = 0
    ) -> list[pb.EventEnvelope]:
        raise AssertionError("no gap was expected")


def test_an_event_applied_while_the_database_is_down_is_not_acknowledged(
    private_postgres: PrivatePostgres, tmp_path: Path
) -> None:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'events.db'}", migrate=True) as events:
        envelopes = bot_games(events, "t1", ["ann", "bob", "cy"], games=1)
    url = private_postgres.create_database("scoring")
    migrate(url)
    store = ScoringStore(url)
    consumer = Consumer(store, NoHistory(), "scoring")
    ends = [i for i, e in enumerate(envelopes) if e.type.endswith(".RoundEnded")]
    head, last = envelopes[: ends[-1]], envelopes[ends[-1] :]  # the final round's end on
    assert all(asyncio.run(consumer.apply_all(head)))
    applied = consumer.applied
    progress = store.progress(stream_id("t1"))
    model = store.table("t1")

    private_postgres.stop()
    for batch in (last, last[:1]):  # the batch, and an event on its own
        assert asyncio.run(consumer.apply_all(batch)) == [False] * len(batch)
    private_postgres.start()
    assert store.progress(stream_id("t1")) == progress, "progress moved for unapplied events"
    assert store.table("t1") == model and consumer.applied == applied

    # Redelivered (not acknowledged): applied now, once.
    assert asyncio.run(consumer.apply_all(last)) == [True] * len(last)
    assert consumer.applied == applied + len(last)
    assert store.progress(stream_id("t1")) == last[-1].version
    again = asyncio.run(consumer.apply_all(last))  # delivered again: acknowledged, skipped
    assert again == [True] * len(last) and consumer.applied == applied + len(last)
    assert store.games("t1"), "the game's end was lost"
