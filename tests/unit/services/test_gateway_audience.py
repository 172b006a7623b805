"""The audience of a table at one gateway: seats written at once, spectators after them by a
paced broadcast, a batch per loop turn, each sent every change it lacks in one write, or the
view now when it fell too far behind; an audience replica's role and the calls it refuses.

The feeds run on a real TableHost and SQLite store, as in ``test_gateway_units``.
"""

from __future__ import annotations

import asyncio
from collections import deque

import pytest

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.config.gateway import GatewaySettings
from president.servicekit.nats import Subjects
from president.services.gateway.api.roles import PLAYERS_ONLY
from president.services.gateway.streams import audience, fanout
from president.services.gateway.streams.audience import BATCH
from president.services.gateway.streams.entries import Entry
from president.services.gateway.streams.fanout import Broadcast, Mailbox, Policy, Start, Wire
from president.services.gateway.streams.feed import FeedHub, TableFeed
from president.services.gateway.streams.watch import WATCH, seat_resolver, watch
from tests.unit.services import test_gateway_units as units

tables = units.tables
NOBODY = seat_resolver(None)


def spectate_at(broadcast: Broadcast, entry: Entry, wire: Wire = WATCH) -> Mailbox:
    """A spectator's mailbox in ``broadcast``, holding ``entry`` (nothing sent yet)."""
    box = audience.spectator(NOBODY, wire)
    broadcast.join(box, Start(entry, [], ""))
    return box


def leave(broadcast: Broadcast, boxes: list[Mailbox]) -> None:
    for box in boxes:
        broadcast.leave(box)
        audience.left()


def versions_in(messages: list[bytes]) -> list[int]:
    return [pb.WatchResponse.FromString(data).version for data in messages]


def at_version(feed: TableFeed, version: int) -> Entry:
    return next(entry for entry in feed.history if entry.version == version)


async def test_seats_get_a_change_at_once_and_spectators_wake_a_batch_per_loop_turn(
    tables: units.LocalTables,
) -> None:
    """A change reaches a seat's mailbox as it is applied; the spectators are written
    BATCH per loop turn after it, and each is sent every change it lacks in one go, the
    same bytes for all."""
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    start = feed.version
    assert feed.current is not None
    seat = Mailbox(seat_resolver("p0"), WATCH, Policy.EVERY)
    feed.seats.join(seat, Start(feed.current, [], ""))
    crowd = [spectate_at(feed.audience, feed.current) for _ in range(BATCH * 3 + 5)]
    woken: list[list[bytes]] = []

    async def spectate(box: Mailbox) -> None:
        woken.append(await box.wait())

    tasks = [asyncio.create_task(spectate(box)) for box in crowd]
    await asyncio.sleep(0)  # every spectator waits
    units.play_human(tables, "t1", 1)
    await feed.catch_up()  # applied now: the seat has every change, no spectator ran yet
    sent = await seat.wait()
    mine = [entry for entry in feed.history if entry.version > start]
    assert versions_in(sent) == [entry.version for entry in mine]
    versions = [entry.version for entry in mine]
    assert versions == list(range(start + 1, feed.version + 1)) and len(versions) >= 1
    assert not woken
    written = 0
    for _ in range(10):
        await asyncio.sleep(0)
        written = sum(1 for box in crowd if box._pending)
        if written or woken:
            break
    assert 0 < written <= BATCH and not woken  # the first batch was written, not the crowd
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert len(woken) == len(crowd)
    shared = [id(entry.watch_response(None)) for entry in mine]
    for taken in woken:  # every change, in order, once, in one take: the same bytes
        assert [id(data) for data in taken] == shared
    assert len(set(shared)) == len(versions), "one serialization per change for every spectator"
    leave(feed.audience, crowd)
    feed.seats.leave(seat)
    assert not feed.watched
    await hub.close()


async def test_a_spectator_too_far_behind_is_sent_the_view_now_not_what_it_missed(
    tables: units.LocalTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spectator that lacks more changes than AUDIENCE_LIMIT, whose mailbox held a write
    unread longer than the lag allows, or that is more than MOST_CHANGES behind in a crowd
    is sent the view now, marked skipped; one that keeps up is sent what it lacks."""
    monkeypatch.setattr(audience, "AUDIENCE_LIMIT", 3)
    monkeypatch.setattr(audience, "WRITES_PER_SECOND", 4000.0)  # one spectator: no crowd
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    start = feed.version
    assert feed.current is not None
    units.play_human(tables, "t1", 3)
    await feed.catch_up()
    assert feed.version - start > 3, "the test needs more changes than a write may carry"

    def sent_after(version: int) -> list[pb.WatchResponse]:
        box = spectate_at(feed.audience, at_version(feed, version))
        feed.audience.flush()
        leave(feed.audience, [box])
        return [pb.WatchResponse.FromString(data) for data in box.take()]

    (skipped,) = sent_after(start)  # further behind than a write carries
    assert skipped.skipped and skipped.snapshot and skipped.version == feed.version
    recent = feed.version - 2
    assert [message.version for message in sent_after(recent)] == [recent + 1, recent + 2]
    monkeypatch.setattr(audience, "MOST_CHANGES", 1)
    assert len(sent_after(recent)) == 2  # alone: not a crowd, it is sent them all
    monkeypatch.setattr(audience, "CROWD_PACE", 0.0)
    assert [message.skipped for message in sent_after(recent)] == [True]  # in a crowd
    monkeypatch.setattr(audience, "MOST_CHANGES", 16)
    monkeypatch.setattr(audience, "AUDIENCE_LAG", 0.0)
    slow = spectate_at(feed.audience, at_version(feed, recent))
    feed.audience.flush()  # written, never read
    await asyncio.sleep(0.01)
    units.play_human(tables, "t1", 1)
    await feed.catch_up()
    feed.audience.flush()  # its write waited unread longer than the lag: the view now
    (late,) = [pb.WatchResponse.FromString(data) for data in await slow.wait()]
    assert late.skipped and late.version == feed.version
    leave(feed.audience, [slow])
    await hub.close()


async def test_a_crowd_is_woken_at_most_once_a_pace_and_misses_no_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The spectators here write at most WRITES_PER_SECOND times a second together: with
    20 spectators at 200 writes a second a table's crowd is written once per 0.1 s, each
    spectator sent every change since its last write in one go, in order, none twice,
    none skipped, while changes come every 5 ms (without the pace: one write per change)."""
    monkeypatch.setattr(audience, "WRITES_PER_SECOND", 200.0)
    monkeypatch.setattr(audience, "MOST_CHANGES", 1000)
    monkeypatch.setattr(audience, "AUDIENCE_LAG", 600.0)  # a stalled machine is no slow reader
    log = FakeLog()
    crowd = audience.broadcast(log)
    before = audience.pace()
    spectators = [spectate_at(crowd, log.append(0), FAKE) for _ in range(20)]
    assert audience.pace() == pytest.approx(before + 20 / 200)
    seen: list[list[int]] = [[] for _ in spectators]
    takes = [0] * len(spectators)

    async def spectate(n: int, box: Mailbox) -> None:
        while taken := await box.wait():
            takes[n] += 1
            seen[n].extend(int(data) for data in taken)

    tasks = [asyncio.create_task(spectate(n, s)) for n, s in enumerate(spectators)]
    await asyncio.sleep(0)
    changes = 200
    began = asyncio.get_running_loop().time()
    for version in range(1, changes + 1):
        log.append(version)
        crowd.changed()
        await asyncio.sleep(0.005)
    took = asyncio.get_running_loop().time() - began
    await asyncio.sleep(0.3)
    crowd.close()
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    leave(crowd, spectators)
    assert audience.pace() == pytest.approx(before)
    for versions in seen:
        assert versions == list(range(1, changes + 1))  # no gap, no duplicate, no skip
    paced = took / 0.1  # the pushes took this many paces (at least 10; more on a busy machine)
    for count in takes:
        assert 2 <= count <= 2 * paced + 2, takes  # not one per change


async def test_a_change_during_a_flush_of_several_turns_reaches_everyone_once_per_flush(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A crowd of three batches is written over several loop turns; a change that comes
    after the first batch was written (between two turns) is not written again in that
    flush to those written already: every spectator is sent it in the next, none twice in
    one."""
    monkeypatch.setattr(audience, "WRITES_PER_SECOND", 100_000.0)
    log = FakeLog()
    crowd = audience.broadcast(log)
    first = log.append(0)
    spectators = [spectate_at(crowd, first, FAKE) for _ in range(3 * BATCH)]
    seen: list[list[int]] = [[] for _ in spectators]

    async def spectate(n: int, box: Mailbox) -> None:
        while taken := await box.wait():
            seen[n].extend(int(data) for data in taken)
            if n == 0 and seen[n][-1] == 1:
                log.append(2)  # between two turns
                crowd.changed()

    tasks = [asyncio.create_task(spectate(n, s)) for n, s in enumerate(spectators)]
    await asyncio.sleep(0)
    try:
        log.append(1)
        crowd.changed()
        async with asyncio.timeout(5):
            while not all(versions[-1:] == [2] for versions in seen):
                await asyncio.sleep(0.005)
        assert all(versions == [1, 2] for versions in seen), seen
        assert crowd.writes <= 2 * len(spectators)  # each written once a flush at most
    finally:
        crowd.close()
        await asyncio.gather(*tasks)
        leave(crowd, spectators)


class FakeEntry:
    """A change as a broadcast reads it: its version (and a table nobody sits at)."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.table = None


class FakeLog:
    """A table's changes, as a feed holds them for its broadcasts."""

    def __init__(self) -> None:
        self.history: deque[FakeEntry] = deque()

    @property
    def current(self) -> FakeEntry | None:
        return self.history[-1] if self.history else None

    def append(self, version: int) -> Entry:
        self.history.append(FakeEntry(version))
        return self.history[-1]  # type: ignore[return-value]


#: A wire whose message is a change's version, in digits.
FAKE = Wire(
    "fake",
    change=lambda entry, seat: str(entry.version).encode(),
    whole=lambda entry, seat, skipped: b"-1",
    part=None,
)


def gateway_role() -> str:
    """The role a replica started with this environment reads."""
    return GatewaySettings.from_env().role


def test_an_audience_replica_refuses_only_calls_that_act_at_a_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    methods = set(pb.DESCRIPTOR.services_by_name["GatewayService"].methods_by_name)
    assert methods >= PLAYERS_ONLY
    assert {"Watch", "GetTable", "Spectate", "ListTables", "CreateGuest"} <= methods - PLAYERS_ONLY
    monkeypatch.delenv("PRESIDENT_GATEWAY_ROLE", raising=False)
    assert gateway_role() == "players"
    monkeypatch.setenv("PRESIDENT_GATEWAY_ROLE", "Audience")
    assert gateway_role() == "audience"
    monkeypatch.setenv("PRESIDENT_GATEWAY_ROLE", "spectators")
    with pytest.raises(SystemExit, match="players or audience"):
        gateway_role()


async def test_a_batched_watch_sends_the_changes_ready_together_in_one_message(
    tables: units.LocalTables,
) -> None:
    """A stream that asked for ``batched`` and fell behind gets every change it missed in
    one message, each exactly as a plain stream sends it alone; a plain stream gets one
    change per message. Both for a seat and for a spectator."""
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    for viewer in (seat_resolver("p0"), seat_resolver(None)):
        batched = watch(hub, "t1", 0, viewer, batched=True)
        plain = watch(hub, "t1", 0, viewer)
        await batched.__anext__(), await plain.__anext__()  # the snapshots
        start = feed.version
        units.play_human(tables, "t1", 2)
        await feed.catch_up()  # every change applied before either stream reads
        count = feed.version - start
        assert count > 1
        one = pb.WatchResponse.FromString(await asyncio.wait_for(batched.__anext__(), 5))
        assert [change.version for change in one.changes] == list(
            range(start + 1, feed.version + 1)
        )
        assert not one.version and not one.HasField("view")  # the changes carry it all
        alone = [
            pb.WatchResponse.FromString(await asyncio.wait_for(plain.__anext__(), 5))
            for _ in range(count)
        ]
        assert all(not message.changes for message in alone)
        assert list(one.changes) == alone
        await batched.aclose()
        await plain.aclose()
    await hub.close()


async def test_a_long_backlog_travels_in_messages_of_bounded_size(
    tables: units.LocalTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batched resume with many changes behind it gets them all, in order, in messages
    no bigger than BATCH_BYTES (but one change each at least)."""
    units.bot_table(tables)
    units.play_human(tables, "t1", 12)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    monkeypatch.setattr(fanout, "BATCH_BYTES", 4096)
    stream = watch(hub, "t1", 1, seat_resolver(None), batched=True)
    versions: list[int] = []
    sent: list[tuple[int, int]] = []  # (bytes, changes) of each message
    while len(versions) < feed.version - 1:
        data = await asyncio.wait_for(stream.__anext__(), 5)
        message = pb.WatchResponse.FromString(data)
        changes = list(message.changes) or [message]
        versions += [change.version for change in changes]
        sent.append((len(data), len(changes)))
    await stream.aclose()
    assert versions == list(range(2, feed.version + 1))  # all of them, in order, once
    assert any(count > 1 for _, count in sent) and len(sent) > 1, sent
    assert all(size <= 4096 or count == 1 for size, count in sent), sent
    await hub.close()
