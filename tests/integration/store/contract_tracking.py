"""Level 3 of the event store contract: consumers that track their position in the global log."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest
from sqlalchemy import Connection, text

from president.store import EventStore, NewEvent, Position, StoredEvent

from .contract import SEEN_TABLE, StoreFixtures, keys, new_event, run_threads, settle


class TrackingContract(StoreFixtures):
    """Consumers every backend tracks: each event handled once, across crashes and instances."""

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

    def test_read_all_of_type_reads_one_type_and_tells_how_far_it_looked(
        self, store: EventStore
    ) -> None:
        rare = NewEvent("test.v1.Rare", b"r")
        store.append("table-1", 0, [new_event(1), rare, new_event(2)], "cmd-1")
        store.append("table-2", 0, [new_event(3)], "cmd-2")
        everything = settle(store).read_all()
        found, newest = store.read_all_of_type(Position.START, "test.v1.Rare")
        assert found == [everything[1]] and newest == everything[-1].position
        assert store.read_all_of_type(newest, "test.v1.Rare") == ([], newest)
        assert store.read_all_of_type(everything[1].position, "test.v1.Rare") == ([], newest)

    def test_commit_from_writes_and_moves_only_from_the_position_it_read(
        self, store: EventStore, seen_table: str
    ) -> None:
        """A consumer that read its batch itself commits it once; a second instance that
        read from the same position is told it moved, and writes nothing."""
        store.append("table-1", 0, [new_event(1), new_event(2)], "cmd-1")
        after = settle(store).tracked_position("directory")
        batch = store.read_all(after)

        def write(connection: Connection) -> None:
            for event in batch:
                self._record(connection, event)

        assert store.commit_from("directory", after, batch[-1].position, write)
        assert store.tracked_position("directory") == batch[-1].position
        assert not store.commit_from("directory", after, batch[-1].position, write)
        assert self._seen(store) == [("table-1", 1), ("table-1", 2)]

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
