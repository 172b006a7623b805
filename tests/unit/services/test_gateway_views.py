"""The gateway's views without processes: legal actions only in the table's newest view.

The feed runs against the fake of the gateway's TablePort of
``test_gateway_units`` (a real TableHost on a real SQLite store).
"""

from __future__ import annotations

import asyncio

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.nats import Subjects
from president.services.gateway.feed import FeedHub
from president.services.gateway.watch import seat_resolver, watch, watch_session
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
    watched = watch(hub, "t1", 0, seat_resolver("p0"))
    session = watch_session(hub, "t1", 0, seat_resolver("p0"))
    assert (await watched.__anext__()).view.round.legal  # the snapshot: the human's turn
    await session.__anext__()
    units.play_human(tables, "t1", 3)
    committed = await tables.read_events("t1", start)
    assert len(committed) > 3
    hub.nudge("t1", committed[-1].version, committed)  # all of them at once
    changes = await asyncio.wait_for(_take(watched, len(committed)), 10)
    framed = await asyncio.wait_for(_take(session, len(committed)), 10)
    carried = [change for item in framed for change in pb.SessionResponse.FromString(item).changes]
    resumed = await asyncio.wait_for(
        _take(watch(hub, "t1", start, seat_resolver("p0")), len(committed)), 10
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
