"""The event store contract: one suite that every backend passes, on a real database.

Subclass ``EventStoreContract`` per backend (see ``test_backends.py``) and
provide three fixtures: ``url`` (a migrated, empty store), ``other_url`` (a
second migrated database, for consumers with their own) and ``empty_url`` (a
database with no schema at all).
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection, select, text, update

from president.events.v1 import events_pb2
from president.store import (
    GENESIS_HASH,
    AppendResult,
    ChainError,
    CommandIdReused,
    ConcurrencyConflict,
    EventStore,
    NewEvent,
    Position,
    SchemaNotReady,
    StoredEvent,
    create_store_engine,
    migrate,
    verify_chain,
)
from president.store.schema import events, metadata

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def new_event(n: int, actor: str = "player-1") -> NewEvent:
    """A small distinct event."""
    return NewEvent("test.v1.Happened", f"payload-{n}".encode(), {"actor": actor})


def keys(stored: list[StoredEvent]) -> list[tuple[str, int]]:
    """(stream, version) of each event, in order."""
    return [(event.stream_id, event.version) for event in stored]


def settle(store: EventStore, timeout: float = 30.0) -> EventStore:
    """Wait until ``read_all`` shows every committed event; return ``store``.

    PostgreSQL: ``read_all`` holds back events while any older transaction on
    the server (in any database: other test runs share it) is still running.
    """
    if store.engine.dialect.name != "postgresql":
        return store
    deadline = time.monotonic() + timeout
    with store.engine.connect() as connection:
        while True:
            newest, horizon = connection.execute(
                text(
                    "SELECT (SELECT max(tx_id) FROM events),"
                    " pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
                )
            ).one()
            connection.rollback()
            if newest is None or horizon > newest:
                return store
            if time.monotonic() > deadline:
                raise AssertionError(f"a transaction older than {newest} ran for {timeout} s")
            time.sleep(0.005)


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


class EventStoreContract:
    """Behaviour every event store backend must show."""

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

    # -- append and read --------------------------------------------------------

    def test_append_to_a_new_stream_numbers_versions_from_one(self, store: EventStore) -> None:
        result = store.append("table-1", 0, [new_event(1), new_event(2)], "cmd-1", time=T0)

        assert (result.stream_id, result.first_version, result.last_version) == ("table-1", 1, 2)
        assert list(result.versions) == [1, 2]
        assert len(result.positions) == 2
        assert result.positions[0] < result.positions[1]
        stored = store.read_stream("table-1")
        assert [(e.version, e.type, e.payload) for e in stored] == [
            (1, "test.v1.Happened", b"payload-1"),
            (2, "test.v1.Happened", b"payload-2"),
        ]
        assert [e.position for e in stored] == list(result.positions)
        assert dict(stored[0].metadata) == {
            "actor": "player-1",
            "command_id": "cmd-1",
            "time": "2026-11-30T12:00:00+00:00",
        }
        assert (stored[0].command_id, stored[0].time) == ("cmd-1", "2026-11-30T12:00:00+00:00")
        assert store.current_version("table-1") == 2

    def test_later_appends_continue_the_stream(self, store: EventStore) -> None:
        store.append("table-1", 0, [new_event(1)], "cmd-1")
        result = store.append("table-1", 1, [new_event(2), new_event(3)], "cmd-2")

        assert list(result.versions) == [2, 3]
        assert [e.version for e in store.read_stream("table-1")] == [1, 2, 3]
        assert [e.version for e in store.read_stream("table-1", from_version=2)] == [2, 3]
        assert store.read_stream("table-1", from_version=4) == []

    def test_streams_are_independent(self, store: EventStore) -> None:
        store.append("table-1", 0, [new_event(1)], "cmd-1")
        store.append("table-2", 0, [new_event(2)], "cmd-2")

        assert keys(store.read_stream("table-1")) == [("table-1", 1)]
        assert keys(store.read_stream("table-2")) == [("table-2", 1)]

    def test_reading_backwards_finds_only_the_asked_types_newest_first(
        self, store: EventStore
    ) -> None:
        kinds = ["a", "b", "a", "c", "b", "a"]
        store.append("table-1", 0, [NewEvent(f"test.v1.{k}", b"x") for k in kinds], "cmd-1")
        store.append("table-2", 0, [NewEvent("test.v1.a", b"x")], "cmd-2")

        def versions(before: int | None = None, limit: int = 100) -> list[int]:
            found = store.read_stream_backwards(
                "table-1", ["test.v1.a", "test.v1.c"], before, limit
            )
            assert all(e.stream_id == "table-1" for e in found)
            return [e.version for e in found]

        assert versions() == [6, 4, 3, 1]
        assert versions(limit=2) == [6, 4]
        assert versions(before=4, limit=2) == [3, 1]
        assert versions(before=1) == []
        assert store.read_stream_backwards("table-nobody", ["test.v1.a"]) == []

    def test_an_unknown_stream_is_empty_at_version_zero(self, store: EventStore) -> None:
        assert store.current_version("table-nobody") == 0
        assert store.read_stream("table-nobody") == []

    def test_the_time_defaults_to_now_in_utc(self, store: EventStore) -> None:
        before = datetime.now(UTC)
        store.append("table-1", 0, [new_event(1)], "cmd-1")
        stamped = datetime.fromisoformat(store.read_stream("table-1")[0].time)

        assert stamped.utcoffset() == timedelta(0)
        assert before <= stamped <= datetime.now(UTC)

    def test_the_time_keeps_the_callers_offset(self, store: EventStore) -> None:
        paris = datetime(2026, 11, 30, 13, 0, tzinfo=timezone(timedelta(hours=1)))
        store.append("table-1", 0, [new_event(1)], "cmd-1", time=paris)

        assert store.read_stream("table-1")[0].time == "2026-11-30T13:00:00+01:00"

    def test_protobuf_payloads_round_trip(self, store: EventStore) -> None:
        played = events_pb2.CardsPlayed(seat=2, cards=["10H", "10S"], trick_version=7)
        store.append("table-1", 0, [NewEvent.from_message(played, {"actor": "p"})], "cmd-1")

        stored = store.read_stream("table-1")[0]
        assert stored.type == "president.events.v1.CardsPlayed"
        assert events_pb2.CardsPlayed.FromString(stored.payload) == played

    # -- optimistic concurrency ------------------------------------------------

    def test_a_stale_expected_version_conflicts_and_writes_nothing(self, store: EventStore) -> None:
        store.append("table-1", 0, [new_event(1), new_event(2)], "cmd-1")
        before = read_everything(store)

        with pytest.raises(ConcurrencyConflict) as raised:
            store.append("table-1", 1, [new_event(3)], "cmd-2")

        conflict = raised.value
        assert (conflict.stream_id, conflict.expected_version, conflict.actual_version) == (
            "table-1",
            1,
            2,
        )
        assert "'table-1'" in str(conflict)
        assert "version 2" in str(conflict)
        assert "expected version 1" in str(conflict)
        assert read_everything(store) == before

    def test_an_expected_version_ahead_of_the_stream_conflicts(self, store: EventStore) -> None:
        with pytest.raises(
            ConcurrencyConflict, match="at version 0, not at the expected version 3"
        ):
            store.append("table-1", 3, [new_event(1)], "cmd-1")
        assert store.read_stream("table-1") == []

    def test_concurrent_appends_at_one_version_let_exactly_one_win(
        self, url: str, store: EventStore
    ) -> None:
        store.append("table-1", 0, [new_event(0)], "cmd-0")
        stores = [EventStore.from_url(url) for _ in range(8)]
        outcomes: list[object] = [None] * 8

        def attempt(i: int) -> None:
            try:
                outcomes[i] = stores[i].append("table-1", 1, [new_event(i)], f"cmd-{i + 1}")
            except ConcurrencyConflict as conflict:
                outcomes[i] = conflict

        try:
            run_threads(8, attempt)
        finally:
            for other in stores:
                other.close()

        winners = [o for o in outcomes if isinstance(o, AppendResult)]
        losers = [o for o in outcomes if isinstance(o, ConcurrencyConflict)]
        assert len(winners) == 1
        assert len(losers) == 7
        assert all(loser.actual_version in (1, 2) for loser in losers)
        stored = store.read_stream("table-1")
        assert [e.version for e in stored] == [1, 2]
        assert verify_chain(stored) is None

    def test_large_batches_keep_their_order(self, store: EventStore) -> None:
        store.append("table-1", 0, [new_event(0)], "cmd-0")
        for command, size in (("cmd-1", 100), ("cmd-2", 150)):
            start = store.current_version("table-1")
            batch = [new_event(n) for n in range(size)]
            result = store.append("table-1", start, batch, command)
            assert list(result.versions) == list(range(start + 1, start + size + 1))
            assert list(result.positions) == sorted(result.positions)
        stored = store.read_stream("table-1")
        assert len(stored) == 251
        assert [e.payload for e in stored[1:101]] == [f"payload-{n}".encode() for n in range(100)]
        assert verify_chain(stored) is None
        assert [e.position for e in stored] == [e.position for e in read_everything(store)]

    def test_an_append_after_anothers_unseen_append_conflicts(
        self, url: str, store: EventStore
    ) -> None:
        store.append("table-1", 0, [new_event(1)], "cmd-1")
        with EventStore.from_url(url) as other:
            other.append("table-1", 1, [new_event(2)], "cmd-2")

        with pytest.raises(ConcurrencyConflict) as raised:
            store.append("table-1", 1, [new_event(3)], "cmd-3")
        assert raised.value.actual_version == 2

        store.append("table-1", 2, [new_event(3)], "cmd-3")
        stored = store.read_stream("table-1")
        assert [e.payload for e in stored] == [b"payload-1", b"payload-2", b"payload-3"]
        assert verify_chain(stored) is None

    def test_a_store_on_a_plain_engine_commits_its_appends(self, url: str) -> None:
        with EventStore(create_store_engine(url)) as plain:
            plain.append("table-1", 0, [new_event(1)], "cmd-1")
            plain.append("table-1", 1, [new_event(2)], "cmd-2")  # after a known head
        with EventStore.from_url(url) as reopened:
            assert [e.version for e in reopened.read_stream("table-1")] == [1, 2]

    # -- idempotency -----------------------------------------------------------

    def test_command_result_tells_what_a_command_wrote(self, store: EventStore) -> None:
        assert store.command_result("cmd-1", "table-1") is None
        first = store.append("table-1", 0, [new_event(1), new_event(2)], "cmd-1")

        assert store.command_result("cmd-1", "table-1") == first
        with pytest.raises(CommandIdReused):
            store.command_result("cmd-1", "table-2")

    def test_the_same_command_twice_takes_effect_once(self, store: EventStore) -> None:
        first = store.append("table-1", 0, [new_event(1), new_event(2)], "cmd-1")
        again = store.append("table-1", 0, [new_event(1), new_event(2)], "cmd-1")

        assert again == first
        assert len(store.read_stream("table-1")) == 2

    def test_a_repeated_command_returns_the_first_result_whatever_it_carries(
        self, store: EventStore
    ) -> None:
        first = store.append("table-1", 0, [new_event(1)], "cmd-1")
        store.append("table-1", 1, [new_event(2)], "cmd-2")

        assert store.append("table-1", 2, [new_event(9)], "cmd-1") == first
        assert store.append("table-1", 0, [new_event(8), new_event(9)], "cmd-1") == first
        assert [e.payload for e in store.read_stream("table-1")] == [b"payload-1", b"payload-2"]

    def test_idempotency_holds_across_store_instances(self, url: str, store: EventStore) -> None:
        first = store.append("table-1", 0, [new_event(1)], "cmd-1")
        with EventStore.from_url(url) as elsewhere:
            assert elsewhere.append("table-1", 0, [new_event(1)], "cmd-1") == first
        assert len(store.read_stream("table-1")) == 1

    def test_concurrent_copies_of_one_command_write_once(self, url: str) -> None:
        stores = [EventStore.from_url(url) for _ in range(8)]
        results: list[AppendResult | None] = [None] * 8

        def attempt(i: int) -> None:
            results[i] = stores[i].append("table-1", 0, [new_event(1), new_event(2)], "cmd-1")

        try:
            run_threads(8, attempt)
            assert len(set(results)) == 1
            assert len(stores[0].read_stream("table-1")) == 2
        finally:
            for other in stores:
                other.close()

    def test_a_command_id_cannot_write_to_a_second_stream(self, store: EventStore) -> None:
        store.append("table-1", 0, [new_event(1)], "cmd-1")

        with pytest.raises(CommandIdReused, match="already appended to stream 'table-1'"):
            store.append("table-2", 0, [new_event(2)], "cmd-1")
        assert store.read_stream("table-2") == []

    # -- bad input -------------------------------------------------------------

    @pytest.mark.parametrize(
        ("stream_id", "expected_version", "batch", "command_id", "error", "message"),
        [
            ("", 0, [new_event(1)], "cmd", ValueError, "stream id has 1 to 200"),
            ("t" * 201, 0, [new_event(1)], "cmd", ValueError, "stream id has 1 to 200"),
            ("table-1", 0, [new_event(1)], "", ValueError, "command id has 1 to 200"),
            ("table-1", -1, [new_event(1)], "cmd", ValueError, "0 or more"),
            ("table-1", 1.0, [new_event(1)], "cmd", TypeError, "expected_version is an int"),
            ("table-1", 0, [], "cmd", ValueError, "at least one event"),
            ("table-1", 0, [b"raw"], "cmd", TypeError, "NewEvent values"),
        ],
    )
    def test_bad_appends_say_what_is_wrong_and_write_nothing(
        self,
        store: EventStore,
        stream_id: str,
        expected_version: int,
        batch: list[NewEvent],
        command_id: str,
        error: type[Exception],
        message: str,
    ) -> None:
        with pytest.raises(error, match=message):
            store.append(stream_id, expected_version, batch, command_id)
        assert read_everything(store) == []

    def test_a_time_without_zone_is_refused(self, store: EventStore) -> None:
        with pytest.raises(ValueError, match="needs a time zone"):
            store.append("table-1", 0, [new_event(1)], "cmd-1", time=datetime(2026, 1, 1))
        assert read_everything(store) == []

    def test_metadata_may_not_contradict_the_append(self, store: EventStore) -> None:
        event = NewEvent("test.v1.Happened", b"", {"command_id": "other"})
        with pytest.raises(ValueError, match="leave 'command_id' out"):
            store.append("table-1", 0, [event], "cmd-1")
        assert read_everything(store) == []

    # -- hash chain ------------------------------------------------------------

    def test_stored_streams_form_a_valid_hash_chain(self, store: EventStore) -> None:
        store.append("table-1", 0, [new_event(1), new_event(2)], "cmd-1")
        store.append("table-1", 2, [new_event(3)], "cmd-2")

        stored = store.read_stream("table-1")
        assert stored[0].previous_hash == GENESIS_HASH
        assert [e.previous_hash for e in stored[1:]] == [e.hash for e in stored[:-1]]
        assert verify_chain(stored) is None

    def _tamper(self, store: EventStore, sql: str) -> ChainError | None:
        with store.engine.begin() as connection:
            connection.execute(text(sql))
        return verify_chain(store.read_stream("table-1"))

    def _five_events(self, store: EventStore) -> None:
        for n in range(5):
            store.append("table-1", n, [new_event(n)], f"cmd-{n}")

    def test_a_changed_payload_is_detected(self, store: EventStore) -> None:
        self._five_events(store)
        with store.engine.begin() as connection:
            connection.execute(
                update(events).where(events.c.version == 3).values(payload=b"payload-x")
            )
        error = verify_chain(store.read_stream("table-1"))
        assert error is not None
        assert (error.version, error.index) == (3, 2)
        assert "was changed" in str(error)

    def test_changed_metadata_is_detected(self, store: EventStore) -> None:
        self._five_events(store)
        error = self._tamper(
            store,
            "UPDATE events SET metadata = REPLACE(metadata, 'player-1', 'player-2') "
            "WHERE version = 2",
        )
        assert error is not None
        assert error.version == 2

    def test_a_removed_event_is_detected(self, store: EventStore) -> None:
        self._five_events(store)
        error = self._tamper(store, "DELETE FROM events WHERE version = 3")
        assert error is not None
        assert error.version == 4
        assert "missing" in str(error)

    def test_a_removed_and_renumbered_event_is_detected(self, store: EventStore) -> None:
        self._five_events(store)
        with store.engine.begin() as connection:
            connection.execute(text("DELETE FROM events WHERE version = 3"))
            for version in (4, 5):
                connection.execute(
                    update(events)
                    .where(events.c.stream_id == "table-1", events.c.version == version)
                    .values(version=version - 1)
                )
        error = verify_chain(store.read_stream("table-1"))
        assert error is not None
        assert error.version == 3  # renumbered from 4: it no longer links to version 2

    def test_reordered_events_are_detected(self, store: EventStore) -> None:
        self._five_events(store)
        with store.engine.begin() as connection:
            for old, new in ((2, 100), (3, 2), (100, 3)):
                connection.execute(
                    update(events)
                    .where(events.c.stream_id == "table-1", events.c.version == old)
                    .values(version=new)
                )
        error = verify_chain(store.read_stream("table-1"))
        assert error is not None
        assert error.version == 2

    # -- the global order ------------------------------------------------------

    def test_read_all_returns_every_event_in_position_order(self, store: EventStore) -> None:
        store.append("table-1", 0, [new_event(1), new_event(2)], "cmd-1")
        store.append("table-2", 0, [new_event(3)], "cmd-2")
        store.append("table-1", 2, [new_event(4)], "cmd-3")

        stored = settle(store).read_all()
        assert keys(stored) == [("table-1", 1), ("table-1", 2), ("table-2", 1), ("table-1", 3)]
        positions = [e.position for e in stored]
        assert positions == sorted(positions)
        assert len(set(positions)) == 4

    def test_read_all_pages_from_a_position(self, store: EventStore) -> None:
        for n in range(7):
            store.append(f"table-{n % 2}", n // 2, [new_event(n)], f"cmd-{n}")
        everything = settle(store).read_all()

        first = store.read_all(None, limit=3)
        second = store.read_all(first[-1].position, limit=3)
        third = store.read_all(second[-1].position, limit=3)
        assert first + second + third == everything
        assert len(third) == 1
        assert store.read_all(third[-1].position) == []

    def test_positions_survive_a_round_trip_through_text(self, store: EventStore) -> None:
        result = store.append("table-1", 0, [new_event(1), new_event(2)], "cmd-1")
        saved = str(result.positions[0])

        restored = Position.parse(saved)
        assert restored == result.positions[0]
        assert keys(settle(store).read_all(restored)) == [("table-1", 2)]

    def test_a_follower_sees_every_event_once_with_8_concurrent_writers(self, url: str) -> None:
        """Eight writers, each with its own store (as separate processes would have),
        append to their own streams and fight over a shared one, while a follower
        tails ``read_all``. The follower must end with every committed event,
        exactly once, each stream in version order. (On PostgreSQL, reading
        without the transaction horizon makes this test fail every time.)"""
        writers, appends = 8, 40
        stores = [EventStore.from_url(url) for _ in range(writers + 1)]
        follower_store = stores[-1]
        results: list[AppendResult] = []
        writing = threading.Event()
        writing.set()
        followed: list[StoredEvent] = []
        polls = 0

        def write(i: int) -> None:
            store, rng = stores[i], random.Random(i)
            for k in range(appends):
                if k % 4 == 3:  # contested: reload the version and retry on conflict
                    while True:
                        version = store.current_version("table-shared")
                        try:
                            result = store.append(
                                "table-shared", version, [new_event(k)], f"w{i}-{k}"
                            )
                            break
                        except ConcurrencyConflict:
                            continue
                else:
                    stream = f"table-{i}-{k % 3}"
                    batch = [new_event(k) for _ in range(rng.randint(1, 3))]
                    result = store.append(stream, store.current_version(stream), batch, f"w{i}-{k}")
                results.append(result)

        def follow() -> None:
            nonlocal polls
            after: Position | None = None
            while True:
                still_writing = writing.is_set()
                chunk = follower_store.read_all(after, limit=25)
                polls += 1
                followed.extend(chunk)
                if chunk:
                    after = chunk[-1].position
                elif not still_writing:
                    return
                else:
                    time.sleep(0.001)

        follower = threading.Thread(target=follow)
        follower.start()
        try:
            run_threads(writers, write)
            settle(follower_store)  # then one empty read means the follower has it all
        finally:
            writing.clear()
            follower.join(timeout=60)
            for other in stores:
                other.close()

        committed = {
            (result.stream_id, version) for result in results for version in result.versions
        }
        seen = Counter(keys(followed))
        assert max(seen.values()) == 1, "an event reached the follower twice"
        assert set(seen) == committed, "the follower missed committed events"
        positions = [event.position for event in followed]
        assert positions == sorted(positions)
        by_stream: dict[str, list[int]] = {}
        for event in followed:
            by_stream.setdefault(event.stream_id, []).append(event.version)
        for stream, versions in by_stream.items():
            assert versions == list(range(1, len(versions) + 1)), stream
        assert len(by_stream["table-shared"]) == writers * appends // 4
        assert polls > 10  # the follower ran alongside the writers

    # -- tracking --------------------------------------------------------------

    def _record(self, connection: Connection, event: StoredEvent) -> None:
        connection.execute(
            text("INSERT INTO seen (stream_id, version) VALUES (:stream, :version)"),
            {"stream": event.stream_id, "version": event.version},
        )

    def _seen(self, store: EventStore) -> list[tuple[str, int]]:
        with store.engine.connect() as connection:
            rows = connection.execute(
                text("SELECT stream_id, version FROM seen ORDER BY stream_id, version")
            )
            return [(str(row[0]), int(row[1])) for row in rows]

    def test_process_hands_each_event_to_the_consumer_once(
        self, store: EventStore, seen_table: str
    ) -> None:
        store.append("table-1", 0, [new_event(1), new_event(2)], "cmd-1")
        store.append("table-2", 0, [new_event(3)], "cmd-2")
        handled: list[StoredEvent] = []

        def handler(event: StoredEvent, connection: Connection) -> None:
            handled.append(event)
            self._record(connection, event)

        assert settle(store).process("scores", handler) == 3
        assert handled == store.read_all()
        assert store.tracked_position("scores") == handled[-1].position
        assert store.process("scores", handler) == 0

        store.append("table-2", 1, [new_event(4)], "cmd-3")
        assert settle(store).process("scores", handler) == 1
        assert self._seen(store) == [("table-1", 1), ("table-1", 2), ("table-2", 1), ("table-2", 2)]

    def test_process_works_in_batches(self, store: EventStore, seen_table: str) -> None:
        for n in range(5):
            store.append("table-1", n, [new_event(n)], f"cmd-{n}")

        def handler(event: StoredEvent, connection: Connection) -> None:
            self._record(connection, event)

        settle(store)
        assert [store.process("scores", handler, limit=2) for _ in range(4)] == [2, 2, 1, 0]
        assert len(self._seen(store)) == 5

    def test_a_crash_in_the_handler_rolls_back_its_writes_and_the_position(
        self, url: str, store: EventStore, seen_table: str
    ) -> None:
        for n in range(4):
            store.append("table-1", n, [new_event(n)], f"cmd-{n}")
        third = store.read_stream("table-1")[2]
        crashes = 1

        def handler(event: StoredEvent, connection: Connection) -> None:
            nonlocal crashes
            self._record(connection, event)
            if event.version == 3 and crashes:
                crashes -= 1
                raise RuntimeError("projection crashed")

        with pytest.raises(RuntimeError, match="projection crashed"):
            settle(store).process("scores", handler)
        assert self._seen(store) == [("table-1", 1), ("table-1", 2)]
        assert store.tracked_position("scores") < third.position

        with EventStore.from_url(url) as restarted:  # as after a restart
            assert restarted.process("scores", handler) == 2
            assert restarted.process("scores", handler) == 0
        assert self._seen(store) == [("table-1", v) for v in (1, 2, 3, 4)]

    def test_process_batch_hands_over_many_events_in_one_transaction(
        self, store: EventStore, seen_table: str
    ) -> None:
        for n in range(5):
            store.append(f"table-{n % 2}", n // 2, [new_event(n)], f"cmd-{n}")
        batches: list[list[tuple[str, int]]] = []

        def handler(batch: list[StoredEvent], connection: Connection) -> None:
            batches.append(keys(batch))
            for event in batch:
                self._record(connection, event)

        settle(store)
        assert [store.process_batch("scores", handler, limit=2) for _ in range(4)] == [2, 2, 1, 0]
        assert [item for batch in batches for item in batch] == keys(store.read_all())
        assert len(self._seen(store)) == 5
        assert store.tracked_position("scores") == store.read_all()[-1].position

    def test_a_crash_in_a_batch_handler_rolls_back_the_whole_batch(
        self, store: EventStore, seen_table: str
    ) -> None:
        for n in range(3):
            store.append("table-1", n, [new_event(n)], f"cmd-{n}")
        crashes = 1

        def handler(batch: list[StoredEvent], connection: Connection) -> None:
            nonlocal crashes
            for event in batch:
                self._record(connection, event)
            if crashes:
                crashes -= 1
                raise RuntimeError("projection crashed")

        with pytest.raises(RuntimeError):
            settle(store).process_batch("scores", handler)
        assert self._seen(store) == []
        assert store.tracked_position("scores") == Position.START
        assert store.process_batch("scores", handler) == 3
        assert len(self._seen(store)) == 3

    def test_advance_over_skips_known_events_only_when_nothing_else_lies_between(
        self, store: EventStore
    ) -> None:
        first = store.append("table-1", 0, [new_event(1), new_event(2)], "cmd-1").events
        third = store.append("table-2", 0, [new_event(3)], "cmd-2").events
        p1, p2, p3 = (e.position for e in [*first, *third])
        settle(store)
        assert store.advance_over("relay", [p2, p1]) == p2
        assert store.tracked_position("relay") == p2
        assert store.advance_over("relay", [p1]) == p2  # behind it already: nothing moves
        later = store.append("table-1", 2, [new_event(4), new_event(5)], "cmd-3").events
        settle(store)
        # Event 3 and event 4 lie between: told only of event 5, nothing moves.
        assert store.advance_over("relay", [later[1].position]) is None
        assert store.tracked_position("relay") == p2
        assert store.advance_over("relay", [p3, later[1].position]) is None
        assert store.advance_over("relay", [p3, *(e.position for e in later)]) == later[1].position
        assert store.read_all(store.tracked_position("relay")) == []

    def test_consumers_track_their_own_positions(self, store: EventStore, seen_table: str) -> None:
        store.append("table-1", 0, [new_event(1)], "cmd-1")
        counts: Counter[str] = Counter()

        def counting(name: str) -> Callable[[StoredEvent, Connection], None]:
            def handler(event: StoredEvent, connection: Connection) -> None:
                counts[name] += 1

            return handler

        assert settle(store).process("one", counting("one")) == 1
        assert store.process("two", counting("two")) == 1
        assert store.process("one", counting("one")) == 0
        assert counts == Counter({"one": 1, "two": 1})
        assert store.tracked_position("three") == Position.START

    def test_two_instances_of_a_consumer_never_handle_an_event_twice(
        self, url: str, store: EventStore, seen_table: str
    ) -> None:
        for n in range(30):
            store.append(f"table-{n % 3}", n // 3, [new_event(n)], f"cmd-{n}")
        instances = [EventStore.from_url(url) for _ in range(2)]
        settle(store)

        def handler(event: StoredEvent, connection: Connection) -> None:
            self._record(connection, event)  # the primary key refuses a second time

        def consume(i: int) -> None:
            while instances[i].process("scores", handler, limit=4):
                pass

        try:
            run_threads(2, consume)
        finally:
            for instance in instances:
                instance.close()
        assert len(self._seen(store)) == 30

    def test_a_consumer_may_keep_its_position_in_its_own_database(
        self, store: EventStore, other_url: str
    ) -> None:
        store.append("table-1", 0, [new_event(1), new_event(2)], "cmd-1")
        with EventStore.from_url(other_url) as own:
            with own.engine.begin() as connection:
                connection.execute(text(SEEN_TABLE))

            def handler(event: StoredEvent, connection: Connection) -> None:
                self._record(connection, event)

            assert own.process("scores", handler, source=settle(store)) == 2
            assert own.process("scores", handler, source=store) == 0
            assert self._seen(own) == [("table-1", 1), ("table-1", 2)]
            assert store.tracked_position("scores") == Position.START
            assert own.tracked_position("scores") == store.read_all()[-1].position

    # -- schema ------------------------------------------------------------------

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
