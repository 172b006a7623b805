"""The gateway's views without processes: legal actions only in the newest view, the activity.

The feed runs against the fake of the gateway's TablePort of
``test_gateway_units`` (a real TableHost on a real SQLite store).
"""

from __future__ import annotations

import asyncio
from collections import deque

import pytest

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.errors import ServiceError
from president.servicekit.nats import Subjects
from president.services.gateway.calls.activity import (
    TOKEN_SECONDS,
    activity_page,
    activity_tokens,
    before_version,
)
from president.services.gateway.calls.page_tokens import (
    DEFAULT_PAGE,
    MAX_PAGE,
    PageTokens,
    page_size,
)
from president.services.gateway.streams.fanout import SeatOf
from president.services.gateway.streams.feed import FeedHub
from president.services.gateway.streams.watch import seat_resolver, watch_session
from tests.unit.services import test_gateway_units as units

#: The gateway unit tests' fixture: the TablePort over an in-process TableHost.
tables = units.tables


async def _take(stream: object, count: int) -> list[object]:
    out = []
    async for item in stream:  # type: ignore[attr-defined]
        out.append(item)
        if len(out) >= count:
            break
    return out


async def test_only_the_newest_change_of_a_batch_invites_a_move(
    tables: units.LocalTables,
) -> None:
    """Several commands' events reach the feed together: the changes before the newest carry
    no legal actions (not on Watch, not on a Session, not on a resume); the newest does."""
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    start = feed.version
    watched = units.watch(hub, "t1", 0, seat_resolver("p0"))
    session = watch_session(hub, "t1", 0, seat_resolver("p0"))
    assert (await watched.__anext__()).view.round.legal  # the snapshot: the human's turn
    await session.__anext__()
    units.play_human(tables, "t1", 3)
    committed = await tables.read_events("t1", start)
    assert len(committed) > 3
    hub.nudge("t1", committed[-1].version, committed)  # all of them at once
    changes = await asyncio.wait_for(_take(watched, len(committed)), 10)
    carried = await asyncio.wait_for(units._session_changes(session, len(committed)), 10)
    resumed = await asyncio.wait_for(
        _take(units.watch(hub, "t1", start, seat_resolver("p0")), len(committed)), 10
    )
    for stream in (changes, carried, resumed):
        *older, newest = stream
        assert [c.version for c in stream] == [e.version for e in committed]  # type: ignore[attr-defined]
        assert not any(c.view.round.legal for c in older)  # type: ignore[attr-defined]
        table = feed.table
        state = table.game.round
        its_turn = state is not None and state.to_act == 0 and state.phase == "play"
        assert bool(newest.view.round.legal) == its_turn  # type: ignore[attr-defined]
    await watched.aclose()
    await session.aclose()
    await hub.close()


async def test_an_activity_page_older_than_the_history_is_folded_from_the_store(
    tables: units.LocalTables,
) -> None:
    """The same pages, from the feed's history and folded again from the stored events."""
    units.bot_table(tables)
    units.play_human(tables, "t1", 6)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    tokens = activity_tokens(b"k")
    readers = [("p0", seat_resolver("p0")), ("s-1", seat_resolver(None))]

    async def pages(reader: str, seat_for: SeatOf) -> list[pb.GetActivityResponse]:
        out = [await activity_page(hub, "t1", seat_for, 5, None, tokens, reader)]
        while out[-1].next_page_token:
            before = before_version(tokens, out[-1].next_page_token, "t1", reader)
            out.append(await activity_page(hub, "t1", seat_for, 5, before, tokens, reader))
        return out

    from_history = {reader: await pages(reader, seat_for) for reader, seat_for in readers}
    feed.history = deque(list(feed.history)[-3:], maxlen=3)  # the history forgets
    reads = tables.reads
    for reader, seat_for in readers:
        again = await pages(reader, seat_for)
        assert [list(p.items) for p in again] == [list(p.items) for p in from_history[reader]]
        versions = [item.version for page in again for item in page.items]
        assert versions == list(range(feed.version, 0, -1))
    assert tables.reads > reads
    await hub.close()


def test_page_tokens_are_checked() -> None:
    now = [1_000_000.0]
    tokens = PageTokens(b"key", "activity", lifetime=TOKEN_SECONDS, clock=lambda: now[0])
    bound = {"table": "t1", "reader": "p0"}
    token = tokens.issue(bound, 40)
    assert before_version(tokens, token, "t1", "p0") == 40
    body, signature = token.split(".")
    bad = [
        "",
        "x.y",
        f"{body}.{signature[:-2]}AA",
        PageTokens(b"other", "activity").issue(bound, 40),
        PageTokens(b"key", "lobby").issue(bound, 40),
        tokens.issue({"table": "t2", "reader": "p0"}, 40),
        tokens.issue({"table": "t1", "reader": "p1"}, 40),
        tokens.issue(bound, "t9"),
    ]
    for forged in bad:
        with pytest.raises(ServiceError) as refused:
            before_version(tokens, forged, "t1", "p0")
        assert refused.value.reason == "PAGE_TOKEN_INVALID", forged
    now[0] += TOKEN_SECONDS + 1
    with pytest.raises(ServiceError) as expired:
        before_version(tokens, token, "t1", "p0")
    assert expired.value.reason == "PAGE_TOKEN_EXPIRED"
    with pytest.raises(ServiceError) as too_big:
        page_size(MAX_PAGE + 1)
    assert too_big.value.reason == "INVALID_PAGE_SIZE" and page_size(0) == DEFAULT_PAGE
