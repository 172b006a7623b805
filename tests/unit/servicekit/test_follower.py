"""The service kit's follower: version order, duplicates dropped, gaps found and filled a page
at a time; the one rule the gateway's feeds, the timer and scoring follow."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from president.events.v1 import events_pb2 as pb
from president.servicekit.follower import Gap, HeldEnvelopes, Place, place, read_gap
from president.servicekit.table_client import read_pages


def env(version: int) -> pb.EventEnvelope:
    return pb.EventEnvelope(stream_id="table-t1", version=version, type=f"e{version}")


def test_a_version_is_seen_next_or_ahead_of_what_was_applied() -> None:
    assert [place(5, v) for v in (1, 5, 6, 7, 40)] == [
        Place.SEEN,
        Place.SEEN,
        Place.NEXT,
        Place.AHEAD,
        Place.AHEAD,
    ]
    assert place(0, 1) is Place.NEXT and place(0, 2) is Place.AHEAD


def test_held_envelopes_come_out_in_order_once_and_stale_ones_are_forgotten() -> None:
    held = HeldEnvelopes()
    assert held.take_next(0) is None
    for version in (4, 2, 3, 2, 9):  # early ones, a duplicate, one past a second gap
        held.hold(env(version))
    assert held.take_next(0) is None  # version 1 is missing: nothing follows yet
    applied = 1  # version 1 came another way
    out: list[int] = []
    while (envelope := held.take_next(applied)) is not None:
        out.append(envelope.version)
        applied = envelope.version
    assert out == [2, 3, 4] and applied == 4
    held.forget_through(10)  # 9 was applied another way (read from the store)
    assert held.take_next(8) is None


class PagedHistory:
    """A table's stored events behind ReadEvents that return at most ``page`` each."""

    def __init__(self, versions: int, page: int) -> None:
        self.events = [env(v) for v in range(1, versions + 1)]
        self.page = page
        self.calls: list[tuple[int, int]] = []

    async def read_events(
        self, table_id: str, after_version: int, limit: int = 0
    ) -> list[pb.EventEnvelope]:
        assert table_id == "t1"

        async def fetch(after: int, count: int) -> Sequence[pb.EventEnvelope]:
            self.calls.append((after, count))
            count = min(count, self.page)
            return [e for e in self.events if e.version > after][:count]

        return await read_pages(fetch, after_version, limit, self.page)


def test_a_gap_is_filled_up_to_the_event_that_found_it_a_page_at_a_time() -> None:
    history = PagedHistory(25, page=4)
    missing = asyncio.run(read_gap(history, Gap("t1", 3), before=15))
    assert [e.version for e in missing] == list(range(4, 15))
    assert history.calls == [(3, 4), (7, 4), (11, 3)]


def test_a_gap_without_an_end_is_filled_with_everything_stored_after_it() -> None:
    history = PagedHistory(10, page=4)
    missing = asyncio.run(read_gap(history, Gap("t1", 0)))
    assert [e.version for e in missing] == list(range(1, 11))
    assert history.calls == [(0, 4), (4, 4), (8, 4)]
