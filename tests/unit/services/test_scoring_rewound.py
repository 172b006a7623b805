"""Scoring after a rewound table history: an asynchronous standby's failover.

The store loses a table's last events (a round's end among them) and gives
their versions to new events; JetStream brings both histories, the lost one
first. Scoring must notice (an event at a version it applied that is not the
one it applied, or one that does not follow it), take the table out of its
read models and apply it again from the store, so that standings, games,
player statistics and ratings equal a recompute from the store. Before, it
kept what it had applied of the lost events, and skipped the new ones as
already seen. A real TableHost on real SQLite stores; scoring's own database on
SQLite and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from president.events.v1 import events_pb2 as epb
from president.services.scoring.consumer import Consumer
from president.services.scoring.store import ScoringStore
from president.store import EventStore, migrate
from tests.support.ratings_truth import ratings_rows
from tests.unit.services.test_gateway_units import LocalTables, bot_table, play_human
from tests.unit.services.test_rewound_history import fail_over, react, standby_copy

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer

PLAYERS = ("p0", "bot-1", "bot-2", "bot-3")
NewDatabase = Callable[[str], str]


@pytest.fixture
def tables(tmp_path: Path) -> LocalTables:
    return LocalTables(EventStore.from_url(f"sqlite:///{tmp_path / 'events.db'}", migrate=True))


@pytest.fixture(params=["sqlite", "postgres"])
def databases(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[NewDatabase]:
    """Scoring databases by name, migrated, on one backend."""
    made: list[str] = []
    server: PostgresServer | None = None
    if request.param == "postgres":
        server = request.getfixturevalue("postgres_server")

    def new(name: str) -> str:
        url = (
            f"sqlite:///{tmp_path / f'{name}.db'}"
            if server is None
            else server.create_database(name.replace("-", "_"))
        )
        migrate(url)
        made.append(url)
        return url

    yield new
    for url in made if server is not None else ():
        server.drop_database(url)


def scoring(databases: NewDatabase, name: str) -> tuple[ScoringStore, str]:
    url = databases(name)
    return ScoringStore(url), url


def read_models(store: ScoringStore, url: str) -> dict[str, Any]:
    """Everything scoring answers about table t1 and its players."""
    return {
        "table": store.table("t1"),
        "games": store.games("t1"),
        "players": [store.player(player) for player in PLAYERS],
        "ratings": ratings_rows(url),
    }


def recomputed(tables: LocalTables, databases: NewDatabase, name: str) -> dict[str, Any]:
    """The read models of a scoring that saw only the store's history."""
    store, url = scoring(databases, name)
    try:
        store.apply_batch(asyncio.run(tables.read_events("t1", 0)))
        return read_models(store, url)
    finally:
        store.close()


def deliver(
    consumer: Consumer, envelopes: list[epb.EventEnvelope], *, first: bool = True
) -> list[bool]:
    """The stream's delivery of ``envelopes``: each for the first time, or again."""
    return asyncio.run(consumer.apply_all(envelopes, [first] * len(envelopes)))


def test_scoring_reads_a_rewound_table_again_and_equals_a_recompute(
    tables: LocalTables, tmp_path: Path, databases: NewDatabase
) -> None:
    bot_table(tables)
    standby = standby_copy(tmp_path)  # mid-round: the round's end is lost below
    play_human(tables, "t1", 200)
    old = asyncio.run(tables.read_events("t1", 0))
    assert any(e.type.endswith("RoundEnded") for e in old)
    store, url = scoring(databases, "scoring")
    consumer = Consumer(store, tables, "scoring")
    assert all(deliver(consumer, old))
    assert read_models(store, url)["table"].rounds_played == 1

    fail_over(tables, standby)
    react(tables, 1)  # the new history: a reaction where the round went on
    new = asyncio.run(tables.read_events("t1", 0))
    assert len(new) < len(old) and not any(e.type.endswith("RoundEnded") for e in new)
    assert all(deliver(consumer, [new[-1]])), "the stream's copy of the new event"
    assert consumer.rewound == 1
    assert read_models(store, url) == recomputed(tables, databases, "truth-1")

    assert all(deliver(consumer, old[-3:], first=False)), "lost events brought again: dropped"
    assert consumer.rewound == 1
    play_human(tables, "t1", 200)  # the new history passes the old one
    newer = asyncio.run(tables.read_events("t1", len(new)))
    assert newer[-1].version > old[-1].version
    assert all(deliver(consumer, newer))
    assert read_models(store, url) == recomputed(tables, databases, "truth-2")
    store.close()


def test_a_rewind_noticed_past_the_old_history_is_read_again_too(
    tables: LocalTables, tmp_path: Path, databases: NewDatabase
) -> None:
    """Scoring sees only events past the version it applied (the new ones at lower versions
    were missed): the first does not follow the event applied last."""
    bot_table(tables)
    standby = standby_copy(tmp_path)
    play_human(tables, "t1", 200)
    old = asyncio.run(tables.read_events("t1", 0))
    store, url = scoring(databases, "scoring")
    consumer = Consumer(store, tables, "scoring")
    assert all(deliver(consumer, old))
    fail_over(tables, standby)
    react(tables, len(old))  # reactions past the old history's length
    new = asyncio.run(tables.read_events("t1", 0))
    passing = next(e for e in new if e.version == old[-1].version + 1)
    assert all(deliver(consumer, [passing]))
    assert consumer.rewound == 1
    assert read_models(store, url) == recomputed(tables, databases, "truth")
    store.close()


def test_an_old_event_of_the_same_history_brought_again_changes_nothing(
    tables: LocalTables, tmp_path: Path, databases: NewDatabase
) -> None:
    """A redelivery (an event of the history applied, below the last one): the store holds
    the event applied last, so nothing is read again."""
    bot_table(tables)
    play_human(tables, "t1", 200)
    events = asyncio.run(tables.read_events("t1", 0))
    store, url = scoring(databases, "scoring")
    consumer = Consumer(store, tables, "scoring")
    assert all(deliver(consumer, events))
    before = read_models(store, url)
    assert all(deliver(consumer, events[3:6] + events[-1:], first=False))
    assert consumer.rewound == 0
    assert read_models(store, url) == before
    store.close()
