"""A table's history rewound under its followers: an asynchronous standby's failover.

The database fails over to a standby that had not received its last commits:
the store loses the table's last events, and the table's next events take
their versions, with other hashes. The gateway's feed and the timer saw the
lost ones. Each must notice (an event whose hash is not the one it applied
at that version, or that does not follow it) and go on from the store as it
is now, or the table stands still for them until its new history passes the
old one. A real TableHost on real SQLite stores: the primary's, and the
standby's, a copy of it taken before the last events.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.hosting.dealer import LocalDealer
from president.hosting.host import TableHost
from president.servicekit.errors import Code, ServiceError
from president.servicekit.follower import Gap
from president.servicekit.identity import Identity
from president.servicekit.nats import Subjects
from president.services.gateway.calls.commands import Commands
from president.services.gateway.streams.feed import FeedHub
from president.services.gateway.streams.watch import seat_resolver
from president.services.table.commands import translate
from president.services.table.handlers import refusal
from president.services.timer.deadlines import Clocks, DeadlineBoard
from president.store import EventStore
from president.table.v1 import table_pb2 as tpb
from tests.unit.services.test_gateway_units import (
    LocalTables,
    _collect,
    bot_table,
    play_human,
    watch,
)


def standby_copy(tmp_path: Path) -> Path:
    """The standby: a consistent copy of the primary's database as it is now."""
    copy = tmp_path / "standby.db"
    with sqlite3.connect(tmp_path / "events.db") as source, sqlite3.connect(copy) as target:
        source.backup(target)
    return copy


def fail_over(tables: LocalTables, standby: Path) -> None:
    """The services reach the standby from now on: it lacks what came after the copy."""
    tables.store.close()
    tables.store = EventStore.from_url(f"sqlite:///{standby}")
    tables.host = TableHost(tables.store, LocalDealer(), clock=ticking())


def ticking() -> Callable[[], datetime]:
    """A clock 3 s on at each reading: the reactions below keep within a seat's rate."""
    now = [datetime.now(UTC)]

    def clock() -> datetime:
        now[0] += timedelta(seconds=3)
        return now[0]

    return clock


def react(tables: LocalTables, times: int) -> None:
    """Seat 0 shows a reaction ``times`` times: new events, not the lost ones."""
    for _ in range(times):
        at = tables.host.load("t1").version
        tables.host.append_reaction("t1", 0, "thumbs_up", f"after-failover-v{at}", "p0")


class Serving(LocalTables):
    """The port with the table service's command path: its translation, its host, and its
    refusals as the service answers them."""

    async def submit(self, request: tpb.ExecuteCommandRequest) -> tpb.ExecuteCommandResponse:
        command = translate(request.command).command
        expected = request.expected_version if request.HasField("expected_version") else None
        try:
            outcome = self.host.decide_and_append(
                request.table_id,
                command,
                request.command_id,
                request.actor.player_id,
                expected_version=expected,
            )
        except Exception as error:
            raise refusal(error) from error
        return tpb.ExecuteCommandResponse(version=outcome.version)


def passing_command(passing: gpb.Pass) -> gpb.Command:
    """A command to pass (``pass`` is a keyword in Python)."""
    command = gpb.Command()
    getattr(command, "pass").CopyFrom(passing)
    return command


@pytest.fixture
def tables(tmp_path: Path) -> LocalTables:
    return Serving(EventStore.from_url(f"sqlite:///{tmp_path / 'events.db'}", migrate=True))


@pytest.mark.parametrize("arrives", ["answer", "nats", "store"])
async def test_a_watch_that_showed_lost_changes_ends_and_a_new_one_follows_the_store(
    tables: LocalTables, tmp_path: Path, arrives: str
) -> None:
    """The new events arrive with a command's answer, from NATS, or (once the new history
    passed the old) from the store: the stream ends with DATA_LOSS HISTORY_REWOUND, and a
    new watch shows the store's table and its next changes."""
    bot_table(tables)
    standby = standby_copy(tmp_path)
    hub = FeedHub(tables, Subjects())
    feed = await hub.feed("t1")
    stream = watch(hub, "t1", 0, seat_resolver("p0"))
    first = await stream.__anext__()
    play_human(tables, "t1", 2)
    lost = await tables.read_events("t1", first.version)
    for item in lost:
        await feed._received(item)
    assert [c.version for c in await _collect(stream, len(lost))] == [e.version for e in lost]

    fail_over(tables, standby)
    react(tables, len(lost) + 1 if arrives == "store" else 1)
    rewritten = await tables.read_events("t1", first.version)
    assert rewritten[0].version == lost[0].version and rewritten[0].hash != lost[0].hash
    if arrives == "answer":
        hub.nudge("t1", rewritten[-1].version, rewritten)
    elif arrives == "nats":
        for item in rewritten:
            await feed._received(item)
    else:
        feed.request_catch_up()
    with pytest.raises(ServiceError) as ended:
        await asyncio.wait_for(_collect(stream, 1), 5)
    assert (ended.value.status, ended.value.reason) == (Code.DATA_LOSS, "HISTORY_REWOUND")
    assert feed.closed and hub.following("t1") is None

    again = watch(hub, "t1", 0, seat_resolver("p0"))
    snapshot = await asyncio.wait_for(again.__anext__(), 5)
    assert snapshot.snapshot and snapshot.version == rewritten[-1].version
    react(tables, 1)
    hub.nudge("t1", rewritten[-1].version + 1, await tables.read_events("t1", snapshot.version))
    change = await asyncio.wait_for(again.__anext__(), 5)
    assert change.version == rewritten[-1].version + 1 and not change.snapshot
    await hub.close()


@pytest.mark.parametrize("chosen_on", ["table_version", "trick_version"])
async def test_a_command_on_the_lost_state_ends_the_watches_at_once(
    tables: LocalTables, tmp_path: Path, chosen_on: str
) -> None:
    """No new event follows the failover: the seat acts on what it saw (a table version or
    a trick the store lost) and is refused; the refusal makes the feed read the store, which
    no longer holds its last event: its streams end HISTORY_REWOUND at once (before: they
    waited for the next event, a turn timed out 30 s later)."""
    bot_table(tables)
    standby = standby_copy(tmp_path)
    hub = FeedHub(tables, Subjects())
    feed = await hub.feed("t1")
    stream = watch(hub, "t1", 0, seat_resolver("p0"))
    first = await stream.__anext__()
    play_human(tables, "t1", 2)
    lost = await tables.read_events("t1", first.version)
    for item in lost:
        await feed._received(item)
    await _collect(stream, len(lost))
    fail_over(tables, standby)
    kept = tables.host.load("t1").version
    assert kept < feed.version

    seen = feed.version
    passing = gpb.Pass(seat=0, trick_version=seen)
    expected = seen if chosen_on == "table_version" else None
    commands = Commands(tables, hub, b"k" * 32)
    with pytest.raises(ServiceError):
        await commands.submit(
            Identity("p0", "P0", "guest", "s-0", 2**40),
            "t1",
            passing_command(passing),
            "on-the-lost-state",
            expected,
        )
    with pytest.raises(ServiceError) as ended:
        await asyncio.wait_for(_collect(stream, 1), 2)
    assert (ended.value.status, ended.value.reason) == (Code.DATA_LOSS, "HISTORY_REWOUND")
    assert feed.closed and hub.following("t1") is None
    again = watch(hub, "t1", 0, seat_resolver("p0"))
    snapshot = await asyncio.wait_for(again.__anext__(), 5)
    assert snapshot.snapshot and snapshot.version == kept
    await hub.close()


async def test_a_refusal_on_the_store_s_own_history_ends_nothing(tables: LocalTables) -> None:
    """No failover: a refused command (a pass on a trick not yet played) makes the feed
    read its last event again; the store holds it, and the stream goes on."""
    bot_table(tables)
    hub = FeedHub(tables, Subjects())
    feed = await hub.feed("t1")
    stream = watch(hub, "t1", 0, seat_resolver("p0"))
    first = await stream.__anext__()
    reads = tables.reads
    commands = Commands(tables, hub, b"k" * 32)
    with pytest.raises(ServiceError):
        await commands.submit(
            Identity("p0", "P0", "guest", "s-0", 2**40),
            "t1",
            passing_command(gpb.Pass(seat=0, trick_version=first.version + 5)),
            "a-wrong-trick",
        )
    for _ in range(200):  # the feed's task reads its last event again
        if tables.reads > reads:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    assert tables.reads == reads + 1 and not feed.closed
    react(tables, 1)
    hub.nudge("t1", first.version + 1, await tables.read_events("t1", first.version))
    change = await asyncio.wait_for(stream.__anext__(), 5)
    assert change.version == first.version + 1
    await hub.close()


async def test_the_timer_reads_a_rewound_table_again_from_the_store(
    tables: LocalTables, tmp_path: Path
) -> None:
    """The stream holds both histories, the lost one first: the first new event at or below
    the version the stream brought last makes the timer forget the table and read it again
    (a gap from version 0); then it follows the new history as a timer that saw only it."""
    now = datetime.now(UTC)
    bot_table(tables)
    standby = standby_copy(tmp_path)
    play_human(tables, "t1", 2)
    old = await tables.read_events("t1", 0)
    fail_over(tables, standby)
    react(tables, 1)
    new = await tables.read_events("t1", 0)
    rewound = next(e for e in new if e.version == len(new))
    assert rewound.version <= old[-1].version and rewound.hash != old[rewound.version - 1].hash

    clocks = Clocks(DeadlineBoard())
    for item in old:
        assert clocks.apply(item, now, streamed=True) is None
    assert clocks.apply(rewound, now, streamed=True) == Gap("t1", 0)
    assert clocks.version("t1") == 0 and clocks.board.get("t1") is None
    for item in new:  # the gap, read from the store
        assert clocks.apply(item, now) is None
    assert clocks.apply(rewound, now, streamed=True) is None  # the same again: nothing
    fresh = Clocks(DeadlineBoard())
    for item in new:
        fresh.apply(item, now)
    assert clocks.version("t1") == len(new)
    assert clocks.board.get("t1") == fresh.board.get("t1")


def test_an_event_the_stream_brings_again_is_no_rewind(tables: LocalTables) -> None:
    """A message delivered twice (same version, same hash) is a repeat, not a rewind."""
    bot_table(tables)
    events: list[epb.EventEnvelope] = asyncio.run(tables.read_events("t1", 0))
    clocks = Clocks(DeadlineBoard())
    now = datetime.now(UTC)
    for item in events:
        assert clocks.apply(item, now, streamed=True) is None
    assert clocks.apply(events[-1], now, streamed=True) is None
    assert clocks.version("t1") == len(events)
