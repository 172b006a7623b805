"""Level 2 of the event store contract: the global log, every committed event once, in order."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

from president.store import AppendResult, ConcurrencyConflict, EventStore, Position, StoredEvent

from .contract import StoreFixtures, keys, new_event, run_threads, settle


class GlobalLogContract(StoreFixtures):
    """The global order every backend keeps: ``read_all`` misses and repeats nothing."""

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
