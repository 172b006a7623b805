"""The event store contract on each backend, for real: SQLite files and a PostgreSQL server.

Each level's case (streams, the global log, tracking, the schema) runs once
per backend; a backend's own behaviour sits beside the level it belongs to.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import Connection, insert, text

from president.store import (
    AppendResult,
    ConcurrencyConflict,
    EventStore,
    NewEvent,
    Position,
    StoredEvent,
    migrate,
)
from president.store.schema import events

from .contract import T0, SchemaContract, keys, new_event, settle
from .contract_log import GlobalLogContract
from .contract_streams import StreamsContract
from .contract_tracking import TrackingContract

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer


class SQLiteDatabases:
    """SQLite, the embedded default: one file per test."""

    @pytest.fixture
    def url(self, tmp_path: Path) -> str:
        url = f"sqlite:///{tmp_path / 'store.db'}"
        migrate(url)
        return url

    @pytest.fixture
    def other_url(self, tmp_path: Path) -> str:
        url = f"sqlite:///{tmp_path / 'consumer.db'}"
        migrate(url)
        return url

    @pytest.fixture
    def empty_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path / 'empty.db'}"


class TestSQLiteStreams(SQLiteDatabases, StreamsContract):
    """Streams on SQLite, and its writers: WAL, queued writers, group commit."""

    def test_the_file_uses_wal(self, store: EventStore) -> None:
        with store.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000

    def test_an_append_waits_for_another_writer_instead_of_failing(self, store: EventStore) -> None:
        outcome: list[object] = []
        with store.engine.connect() as other_writer:
            other_writer.begin()  # BEGIN IMMEDIATE: holds the write lock
            other_writer.execute(text("DELETE FROM tracking"))
            appending = threading.Thread(
                target=lambda: outcome.append(store.append("table-1", 0, [new_event(1)], "c"))
            )
            appending.start()
            time.sleep(0.3)
            assert outcome == []  # queued behind the open write transaction
            other_writer.commit()
        appending.join(timeout=10)
        assert len(outcome) == 1
        assert keys(store.read_stream("table-1")) == [("table-1", 1)]

    def test_appends_that_queue_for_the_writer_share_one_commit(self, store: EventStore) -> None:
        outcomes = self._queued_appends(store, [(f"table-{n}", 1, f"c{n}") for n in range(1, 8)])
        group = store.group_commit
        assert group is not None
        assert all(isinstance(outcome, AppendResult) for outcome in outcomes.values())
        for n in range(8):
            assert keys(store.read_stream(f"table-{n}")) == [(f"table-{n}", 1), (f"table-{n}", 2)]
        # The first append's commit, then the seven that queued meanwhile: one more.
        assert (group.commits, group.statements) == (2, 8)

    def test_a_group_stores_what_its_appends_store_one_at_a_time(
        self, store: EventStore, other_url: str
    ) -> None:
        """The group commit agrees with the plain path: each append committed alone (an
        append that finds the writer free) writes the same rows and answers the same."""
        wanted = [(f"table-{n}", 1, f"c{n}") for n in range(1, 6)]
        grouped = self._queued_appends(store, wanted)
        group = store.group_commit
        assert group is not None and (group.commits, group.statements) == (2, 6)
        with EventStore.from_url(other_url) as alone:
            for stream in {"table-0", *(stream for stream, _, _ in wanted)}:
                alone.append(stream, 0, [new_event(0)], f"first-{stream}", time=T0)
            alone.append("table-0", 1, [new_event(9)], "lead", time=T0)
            for n, (stream, version, command_id) in enumerate(wanted):
                one = alone.append(stream, version, [new_event(n)], command_id, time=T0)
                answer = grouped[(stream, version, command_id, n)]
                assert isinstance(answer, AppendResult)
                assert [(e.version, e.hash) for e in answer.events] == [
                    (e.version, e.hash) for e in one.events
                ]
            single = alone.group_commit
            assert single is not None and single.commits == single.statements == 6

        def rows(url: str) -> list[tuple[object, ...]]:
            columns = [c for c in events.columns if c.name not in ("id", "tx_id")]
            with EventStore.from_url(url) as reader, reader.engine.connect() as connection:
                query = events.select().with_only_columns(*columns)
                ordered = query.order_by(events.c.stream_id, events.c.version)
                return [tuple(row) for row in connection.execute(ordered)]

        assert rows(other_url) == rows(str(store.engine.url)) and len(rows(other_url)) == 12

    def test_a_refused_append_in_a_group_fails_alone(self, store: EventStore) -> None:
        # Two appends to table-1 at version 1 in the same group: one takes
        # version 2, the other is a conflict; the others of the group commit.
        wanted = [("table-1", 1, "first"), ("table-1", 1, "second")]
        wanted += [(f"table-{n}", 1, f"c{n}") for n in range(2, 7)]
        outcomes = self._queued_appends(store, wanted)
        refused = [key for key, outcome in outcomes.items() if isinstance(outcome, Exception)]
        assert len(refused) == 1 and refused[0][0] == "table-1"
        assert isinstance(outcomes[refused[0]], ConcurrencyConflict)
        assert "'table-1' is at version 2, not at the expected version 1" in str(
            outcomes[refused[0]]
        )
        assert store.current_version("table-1") == 2
        for n in range(2, 7):
            assert store.current_version(f"table-{n}") == 2

    def test_a_command_retried_within_a_group_runs_once(self, store: EventStore) -> None:
        outcomes = self._queued_appends(
            store, [("table-1", 1, "same"), ("table-1", 1, "same"), ("table-2", 1, "other")]
        )
        first, again = outcomes[("table-1", 1, "same", 0)], outcomes[("table-1", 1, "same", 1)]
        assert isinstance(first, AppendResult) and first == again
        assert keys(store.read_stream("table-1")) == [("table-1", 1), ("table-1", 2)]

    @staticmethod
    def _queued_appends(
        store: EventStore, wanted: list[tuple[str, int, str]]
    ) -> dict[tuple[str, int, str, int], object]:
        """Append ``wanted`` (stream, expected version, command id) so that they share a commit.

        Every stream first gets one event (an append right after a known event
        takes the group commit's path), and table-0 one more. Another
        connection then holds SQLite's write lock: the append to table-0 leads,
        waiting for the lock; the wanted appends queue behind it; the lock goes.
        """
        for stream in {"table-0", *(stream for stream, _, _ in wanted)}:
            store.append(stream, 0, [new_event(0)], f"first-{stream}", time=T0)
        group = store.group_commit
        assert group is not None
        group.commits = group.statements = 0
        outcomes: dict[tuple[str, int, str, int], object] = {}

        def append(key: tuple[str, int, str, int]) -> None:
            stream, version, command_id, _ = key
            try:
                outcomes[key] = store.append(
                    stream, version, [new_event(key[3])], command_id, time=T0
                )
            except Exception as error:
                outcomes[key] = error

        threads = []
        with store.engine.connect() as other_writer:
            other_writer.begin()  # BEGIN IMMEDIATE: holds the write lock
            other_writer.execute(text("DELETE FROM tracking"))
            leader = threading.Thread(target=append, args=(("table-0", 1, "lead", 9),))
            leader.start()
            time.sleep(0.3)  # the leader took its group of one and waits for the lock
            for n, (stream, version, command_id) in enumerate(wanted):
                thread = threading.Thread(target=append, args=((stream, version, command_id, n),))
                thread.start()
                threads.append(thread)
            deadline = time.monotonic() + 10
            while group.waiting < len(wanted) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert group.waiting == len(wanted)
            other_writer.commit()
        for thread in [leader, *threads]:
            thread.join(timeout=10)
        assert isinstance(outcomes.pop(("table-0", 1, "lead", 9)), AppendResult)
        return outcomes


class TestSQLiteLog(SQLiteDatabases, GlobalLogContract):
    """The global log on SQLite."""


class TestSQLiteTracking(SQLiteDatabases, TrackingContract):
    """Consumers on SQLite."""


class TestSQLiteSchema(SQLiteDatabases, SchemaContract):
    """Opening SQLite databases."""

    def test_a_memory_database_is_refused(self) -> None:
        with pytest.raises(ValueError, match="in a file, not in memory"):
            EventStore.from_url("sqlite://")


#: An event inserted by hand in a transaction left open: an append still running.
SLOW_ROW = {
    "stream_id": "table-slow",
    "version": 1,
    "type": "test.v1.Happened",
    "payload": b"",
    "metadata": "{}",
    "command_id": "slow",
    "command_seq": 0,
    "hash": "0" * 64,
    "previous_hash": "0" * 64,
}


class PostgresDatabases:
    """PostgreSQL: one database for each class, emptied before each test."""

    @pytest.fixture(scope="class")
    @classmethod
    def migrated_url(cls, postgres_url: str) -> str:
        migrate(postgres_url)
        return postgres_url

    @pytest.fixture
    def url(self, migrated_url: str) -> Iterator[str]:
        with EventStore.from_url(migrated_url) as store, store.engine.begin() as connection:
            connection.execute(text("TRUNCATE events, tracking RESTART IDENTITY"))
            connection.execute(text("DROP TABLE IF EXISTS seen"))
        yield migrated_url

    @pytest.fixture
    def other_url(self, postgres_server: PostgresServer) -> Iterator[str]:
        url = postgres_server.create_database("consumer")
        migrate(url)
        yield url
        postgres_server.drop_database(url)

    @pytest.fixture
    def empty_url(self, postgres_server: PostgresServer) -> Iterator[str]:
        url = postgres_server.create_database("empty")
        yield url
        postgres_server.drop_database(url)


class TestPostgresStreams(PostgresDatabases, StreamsContract):
    """Streams on PostgreSQL: psycopg 3, and appends that take no table lock."""

    def test_postgresql_urls_use_psycopg_3(self, url: str) -> None:
        plain = url.replace("postgresql+psycopg://", "postgresql://")
        with EventStore.from_url(plain) as store:
            assert store.engine.url.drivername == "postgresql+psycopg"
            assert store.append("table-1", 0, [new_event(1)], "cmd-1").last_version == 1

    def test_appends_take_no_table_lock(self, store: EventStore) -> None:
        """Appends to other streams go ahead while one append's transaction is open."""
        with store.engine.connect() as slow:
            slow.begin()
            slow.execute(text("LOCK TABLE tracking IN SHARE MODE"))  # unrelated, to hold xid
            slow.execute(
                insert(events).values(
                    stream_id="table-slow",
                    version=1,
                    type="t",
                    payload=b"",
                    metadata="{}",
                    command_id="slow",
                    command_seq=0,
                    hash="0" * 64,
                    previous_hash="0" * 64,
                )
            )
            started = time.perf_counter()
            for n in range(20):
                store.append(f"table-{n}", 0, [new_event(n)], f"cmd-{n}")
            assert time.perf_counter() - started < 5
            slow.rollback()
        assert len(settle(store).read_all()) == 20


class TestPostgresLog(PostgresDatabases, GlobalLogContract):
    """The global log on PostgreSQL: it waits for transactions still running."""

    def test_a_follower_waits_for_an_older_transaction_still_running(
        self, store: EventStore
    ) -> None:
        """The case a plain ``id > last`` follower gets wrong: a transaction takes a
        lower id, a later one commits a higher id first. Until the first ends,
        ``read_all`` shows neither, so the follower cannot move past the lower id."""
        with store.engine.connect() as slow:
            slow.begin()
            slow.execute(insert(events).values(SLOW_ROW))  # id 1, transaction still open
            store.append("table-fast", 0, [NewEvent("test.v1.Happened", b"")], "fast")  # id 2

            with store.engine.connect() as naive:
                rows = naive.execute(text("SELECT stream_id FROM events WHERE id > 0")).all()
                assert [r[0] for r in rows] == ["table-fast"]  # a naive follower moves to id 2
            assert store.read_all() == []  # ours waits
            slow.commit()

        assert keys(settle(store).read_all()) == [("table-slow", 1), ("table-fast", 1)]


class TestPostgresTracking(PostgresDatabases, TrackingContract):
    """Consumers on PostgreSQL: never past a running append, never holding followers back."""

    def test_advance_over_never_skips_an_older_transaction_still_running(
        self, store: EventStore
    ) -> None:
        """Told of a later commit only, a consumer does not jump over a running append."""
        with store.engine.connect() as slow:
            slow.begin()
            slow.execute(insert(events).values(SLOW_ROW))  # transaction still open
            fast = store.append("table-fast", 0, [NewEvent("test.v1.Happened", b"")], "fast")
            assert store.advance_over("relay", [fast.events[0].position]) is None
            slow.commit()
        assert store.tracked_position("relay") == Position.START
        assert keys(settle(store).read_all()) == [("table-slow", 1), ("table-fast", 1)]

    def test_a_handler_that_has_not_written_holds_back_no_follower(
        self, url: str, store: EventStore
    ) -> None:
        """A relay publishing elsewhere must not stall the global order while it works."""
        store.append("table-1", 0, [new_event(1)], "cmd-1")
        seen: list[tuple[str, int]] = []

        def handler(event: StoredEvent, connection: Connection) -> None:
            with EventStore.from_url(url) as other:
                other.append("table-2", 0, [new_event(2)], "cmd-2")
                seen.extend(keys(settle(other, timeout=5).read_all()))

        assert settle(store).process("relay", handler) == 1
        assert seen == [("table-1", 1), ("table-2", 1)]


class TestPostgresSchema(PostgresDatabases, SchemaContract):
    """Opening PostgreSQL databases."""
