"""Level 1 of the event store contract: streams (appends, concurrency, idempotency, hash chain)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import text, update

from president.events.v1 import events_pb2
from president.store import (
    GENESIS_HASH,
    AppendResult,
    ChainError,
    CommandIdReused,
    ConcurrencyConflict,
    EventStore,
    NewEvent,
    create_store_engine,
    verify_chain,
)
from president.store.schema import events

from .contract import T0, StoreFixtures, keys, new_event, read_everything, run_threads


class StreamsContract(StoreFixtures):
    """Streams every backend keeps: versions, conflicts, command ids, the hash chain."""

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

    def test_an_append_after_a_known_head_stores_what_the_plain_path_stores(
        self, url: str, other_url: str
    ) -> None:
        """The fast path (``president.store.fast_append``: one INSERT after a stream head the
        store knows) writes the rows, byte for byte, that the plain path writes (the head
        read in a transaction, then the insert), and answers the same."""
        batches = [[new_event(1)], [new_event(2), new_event(3)], [new_event(4, "player-2")]]
        answers: dict[str, list[AppendResult]] = {"fast": [], "plain": []}
        with EventStore.from_url(url) as fast:  # after its first append it knows the head
            version = 0
            for n, batch in enumerate(batches):
                answers["fast"].append(fast.append("table-1", version, batch, f"c{n}", time=T0))
                version += len(batch)
        version = 0
        for n, batch in enumerate(batches):
            with EventStore.from_url(other_url) as plain:  # a new store reads the head first
                answers["plain"].append(plain.append("table-1", version, batch, f"c{n}", time=T0))
            version += len(batch)

        def rows(at: str) -> list[tuple[object, ...]]:
            columns = [c for c in events.columns if c.name not in ("id", "tx_id")]
            with EventStore.from_url(at) as store, store.engine.connect() as connection:
                found = connection.execute(
                    events.select().with_only_columns(*columns).order_by(events.c.version)
                )
                return [tuple(row) for row in found]

        assert rows(url) == rows(other_url) and len(rows(url)) == 4

        def answered(result: AppendResult) -> list[tuple[object, ...]]:
            return [
                (e.stream_id, e.version, e.type, e.payload, dict(e.metadata), e.hash)
                for e in result.events
            ]

        assert [answered(a) for a in answers["fast"]] == [answered(a) for a in answers["plain"]]

    def test_an_append_after_a_head_a_failover_lost_is_refused_not_written_past_a_gap(
        self, url: str
    ) -> None:
        """After a failover to an asynchronous standby, the head this store remembers may be
        gone. The fast path must not write after it: the append is refused as stale (the
        table reloads), and the stream keeps no hole."""
        with EventStore.from_url(url) as store:
            store.append("table-1", 0, [new_event(1)], "cmd-1")
            store.append("table-1", 1, [new_event(2)], "cmd-2")  # remembered as the head
            with store.engine.begin() as connection:  # the standby never got version 2
                connection.execute(
                    events.delete().where(events.c.stream_id == "table-1", events.c.version == 2)
                )
            with pytest.raises(ConcurrencyConflict) as raised:
                store.append("table-1", 2, [new_event(3)], "cmd-3")
            assert raised.value.actual_version == 1
            assert [e.version for e in store.read_stream("table-1")] == [1]
            store.append("table-1", 1, [new_event(3)], "cmd-3")  # after a reload: in place
            stored = store.read_stream("table-1")
            assert [e.version for e in stored] == [1, 2]
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
