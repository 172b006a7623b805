"""The event store contract: one abstract test case per level, each passed by every backend.

After pyeventsourcing's ``eventsourcing/tests/persistence.py``: the store's
levels each have a case of their own, subclassed per backend in
``test_backends.py`` (SQLite files and a PostgreSQL server, for real):

- ``StreamsContract`` (``contract_streams.py``): appends and reads, optimistic
  concurrency, idempotency, bad input, the hash chain;
- ``GlobalLogContract`` (``contract_log.py``): ``read_all``, the gap-free global order;
- ``TrackingContract`` (``contract_tracking.py``): consumers, ``process`` and friends;
- ``SchemaContract`` (here): opening a database, and its migrations.

A backend provides three fixtures (see ``StoreFixtures``): ``url`` (a
migrated, empty store), ``other_url`` (a second migrated database, for
consumers with their own) and ``empty_url`` (a database with no schema at all).
This module also holds the helpers the cases share.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import select, text

from president.store import EventStore, NewEvent, SchemaNotReady, StoredEvent, migrate
from president.store.schema import events, metadata
from tests.support.postgres import settle

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def new_event(n: int, actor: str = "player-1") -> NewEvent:
    """A small distinct event."""
    return NewEvent("test.v1.Happened", f"payload-{n}".encode(), {"actor": actor})


def keys(stored: list[StoredEvent]) -> list[tuple[str, int]]:
    """(stream, version) of each event, in order."""
    return [(event.stream_id, event.version) for event in stored]


def read_everything(store: EventStore, batch: int = 1000) -> list[StoredEvent]:
    """``read_all`` from the start until it returns nothing (after ``settle``)."""
    settle(store)
    seen: list[StoredEvent] = []
    after = None
    while chunk := store.read_all(after, batch):
        seen.extend(chunk)
        after = chunk[-1].position
    return seen


def run_threads(count: int, target: Callable[[int], None]) -> None:
    """Run ``target(i)`` in ``count`` threads started together; re-raise the first error."""
    errors: list[BaseException] = []
    start = threading.Barrier(count)

    def run(i: int) -> None:
        try:
            start.wait()
            target(i)
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    if errors:
        raise errors[0]


SEEN_TABLE = """
CREATE TABLE seen (
    stream_id VARCHAR(200) NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (stream_id, version)
)
"""


class StoreFixtures:
    """The databases a backend provides, and the store on them every case uses."""

    @pytest.fixture
    def url(self) -> str:
        """A migrated database with no events and no tracking rows."""
        raise NotImplementedError

    @pytest.fixture
    def other_url(self) -> str:
        """Another migrated, empty database."""
        raise NotImplementedError

    @pytest.fixture
    def empty_url(self) -> str:
        """A database without any tables."""
        raise NotImplementedError

    @pytest.fixture
    def store(self, url: str) -> Iterator[EventStore]:
        with EventStore.from_url(url) as store:
            yield store

    @pytest.fixture
    def seen_table(self, store: EventStore) -> Iterator[str]:
        """A consumer's table in the store's database (the consumer's own schema, not ours)."""
        with store.engine.begin() as connection:
            connection.execute(text(SEEN_TABLE))
        yield "seen"
        with store.engine.begin() as connection:
            connection.execute(text("DROP TABLE seen"))


class SchemaContract(StoreFixtures):
    """Opening a database: the schema must be there, and the migrations make it."""

    def test_opening_a_database_without_the_schema_says_how_to_create_it(
        self, empty_url: str
    ) -> None:
        with pytest.raises(SchemaNotReady, match=r"revision none.*president\.store\.migrate"):
            EventStore.from_url(empty_url)

    def test_migrations_create_the_store_tables_exactly_as_it_uses_them(
        self, empty_url: str
    ) -> None:
        migrate(empty_url)
        migrate(empty_url)  # a second run changes nothing
        with EventStore.from_url(empty_url) as store, store.engine.connect() as connection:
            # Other modules' tables (dealer, scoring) share the migration chain.
            context = MigrationContext.configure(
                connection,
                opts={
                    "include_name": lambda name, kind, _: kind != "table" or name in metadata.tables
                },
            )
            assert compare_metadata(context, metadata) == []
            assert connection.execute(select(events.c.id)).all() == []

    def test_from_url_can_migrate_first(self, empty_url: str) -> None:
        with EventStore.from_url(empty_url, migrate=True) as store:
            assert store.append("table-1", 0, [new_event(1)], "cmd-1").last_version == 1
