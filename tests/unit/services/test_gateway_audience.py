"""The audience of a table at one gateway: seats served at once, spectators woken a batch per
loop turn after them, each taking what it has not sent from one shared, bounded log; an
audience replica's role and the calls it refuses.

The feeds run on a real TableHost and SQLite store, as in ``test_gateway_units``.
"""

from __future__ import annotations

import asyncio

import pytest

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.config.gateway import GatewaySettings
from president.servicekit.nats import Subjects
from president.services.gateway.api.roles import PLAYERS_ONLY
from president.services.gateway.streams import audience, fanout
from president.services.gateway.streams.audience import BATCH, Spectator
from president.services.gateway.streams.entries import Entry
from president.services.gateway.streams.fanout import Mailbox, Policy, Start
from president.services.gateway.streams.feed import FeedHub
from president.services.gateway.streams.watch import WATCH, seat_resolver, watch
from tests.unit.services import test_gateway_units as units

tables = units.tables


async def test_seats_get_a_change_at_once_and_spectators_wake_a_batch_per_loop_turn(
    tables: units.LocalTables,
) -> None:
    """A change reaches a seat's inbox as it is applied; the waiting spectators wake
    BATCH per loop turn after it, and each takes every change it has not sent in one go,
    the same entries (and bytes) for all."""
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    start = feed.version
    assert feed.current is not None
    seat = Mailbox(seat_resolver("p0"), WATCH, Policy.EVERY)
    feed.seats.join(seat, Start(feed.current, [], ""))
    crowd = [feed.listen()[0] for _ in range(BATCH * 3 + 5)]
    woken: list[list[Entry]] = []

    async def spectate(spectator: Spectator) -> None:
        taken = await spectator.take(start)
        assert taken is not None
        woken.append(taken)

    tasks = [asyncio.create_task(spectate(spectator)) for spectator in crowd]
    await asyncio.sleep(0)  # every spectator waits
    units.play_human(tables, "t1", 1)
    await feed.catch_up()  # applied now: the seat has every change, no spectator ran yet
    sent = await seat.wait()
    mine = [entry for entry in feed.history if entry.version > start]
    assert [pb.WatchResponse.FromString(data).version for data in sent] == [
        entry.version for entry in mine
    ]
    versions = [entry.version for entry in mine]
    assert versions == list(range(start + 1, feed.version + 1)) and len(versions) >= 1
    assert not woken
    for _ in range(10):
        await asyncio.sleep(0)
        if woken:
            break
    assert 0 < len(woken) <= BATCH  # the first batch ran, not the whole crowd
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert len(woken) == len(crowd)
    for taken in woken:  # every change, in order, once, in one take: the same entries
        assert [id(entry) for entry in taken] == [id(entry) for entry in mine]
    shared = {id(entry.watch_response(None)) for entry in feed.history if entry.version > start}
    assert len(shared) == len(versions), "one serialization per change for every spectator"
    for spectator in crowd:
        feed.unlisten(spectator)
    feed.seats.leave(seat)
    assert not feed.watched
    await hub.close()


async def test_a_spectator_too_far_behind_overflows_and_holds_no_changes_of_its_own(
    tables: units.LocalTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log is shared and bounded: a spectator whose next change left it, waited
    longer than the lag allows, or that is more than MOST_CHANGES behind in a crowd
    overflows (its stream skips to the view now); one that keeps up takes what it has not
    sent."""
    monkeypatch.setattr(audience, "AUDIENCE_LIMIT", 3)
    monkeypatch.setattr(audience, "WRITES_PER_SECOND", 4000.0)  # one spectator: no crowd
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    start = feed.version
    behind, _, _ = feed.listen()
    assert isinstance(behind, Spectator)
    units.play_human(tables, "t1", 3)
    await feed.catch_up()
    assert feed.version - start > 3, "the test needs more changes than the log holds"
    assert await behind.take(start) is None and behind.overflowed  # left the log
    recent = feed.version - 2
    taken = await behind.take(recent)
    assert taken is not None and [entry.version for entry in taken] == [
        recent + 1,
        recent + 2,
    ]
    monkeypatch.setattr(audience, "MOST_CHANGES", 1)
    assert await behind.take(recent) is not None  # alone: not a crowd, it takes them all
    monkeypatch.setattr(audience, "CROWD_PACE", 0.0)
    assert await behind.take(recent) is None  # in a crowd: more than one take carries
    monkeypatch.setattr(audience, "MOST_CHANGES", 16)
    monkeypatch.setattr(audience, "AUDIENCE_LAG", 0.0)
    await asyncio.sleep(0.01)
    assert await behind.take(recent) is None  # unread for longer than the lag
    assert len(feed.audience._log) <= 3
    feed.unlisten(behind)
    await hub.close()


async def test_a_crowd_is_woken_at_most_once_a_pace_and_misses_no_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The spectators here write at most WRITES_PER_SECOND times a second together: with
    20 spectators at 200 writes a second a table's crowd is woken once per 0.1 s, each
    spectator taking every change since its last take in one go, in order, none twice,
    none skipped, while changes come every 5 ms (without the pace: one take per change)."""
    monkeypatch.setattr(audience, "WRITES_PER_SECOND", 200.0)
    monkeypatch.setattr(audience, "MOST_CHANGES", 1000)
    monkeypatch.setattr(audience, "AUDIENCE_LAG", 600.0)  # a stalled machine is no slow reader
    crowd = audience.Audience()
    before = audience.pace()
    spectators = [crowd.listener() for _ in range(20)]
    assert audience.pace() == pytest.approx(before + 20 / 200)
    seen: list[list[int]] = [[] for _ in spectators]
    takes = [0] * len(spectators)

    async def spectate(n: int, spectator: Spectator) -> None:
        after = 0
        while True:
            taken = await spectator.take(after)
            if taken is None:
                return
            takes[n] += 1
            seen[n].extend(entry.version for entry in taken)
            after = taken[-1].version

    tasks = [asyncio.create_task(spectate(n, s)) for n, s in enumerate(spectators)]
    await asyncio.sleep(0)
    changes = 200
    for version in range(1, changes + 1):
        crowd.push(FakeEntry(version))  # type: ignore[arg-type]
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.3)
    crowd.close()
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    for spectator in spectators:
        crowd.leave(spectator)
    assert audience.pace() == pytest.approx(before)
    for versions in seen:
        assert versions == list(range(1, changes + 1))  # no gap, no duplicate, no skip
    paced = changes * 0.005 / 0.1  # the pushes took at least this many paces
    for count in takes:
        assert 2 <= count <= 2 * paced + 2, takes  # not one per change


async def test_a_change_during_a_waking_of_several_turns_reaches_everyone_once_per_waking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A crowd of three batches is woken over several loop turns; a change that comes
    after the first batch took (between two turns) is not taken again in that waking by
    those who took already: every spectator takes it in the next, none twice in one."""
    monkeypatch.setattr(audience, "WRITES_PER_SECOND", 100_000.0)
    crowd = audience.Audience()
    spectators = [crowd.listener() for _ in range(3 * BATCH)]
    seen: list[list[int]] = [[] for _ in spectators]
    wakings: list[list[int]] = [[] for _ in spectators]

    async def spectate(n: int, spectator: Spectator) -> None:
        after = 0
        while (taken := await spectator.take(after)) is not None:
            wakings[n].append(crowd.wakings)
            seen[n].extend(entry.version for entry in taken)
            after = taken[-1].version
            if n == 0 and after == 1:
                crowd.push(FakeEntry(2))  # type: ignore[arg-type]  # between two turns

    tasks = [asyncio.create_task(spectate(n, s)) for n, s in enumerate(spectators)]
    await asyncio.sleep(0)
    try:
        crowd.push(FakeEntry(1))  # type: ignore[arg-type]
        async with asyncio.timeout(5):
            while not all(versions[-1:] == [2] for versions in seen):
                await asyncio.sleep(0.005)
        assert all(versions == [1, 2] for versions in seen), seen
        assert all(taken == sorted(set(taken)) for taken in wakings), wakings  # once a waking
    finally:
        crowd.close()
        await asyncio.gather(*tasks)
        for spectator in spectators:
            crowd.leave(spectator)


class FakeEntry:
    """A change as the audience's log holds it: its version."""

    def __init__(self, version: int) -> None:
        self.version = version


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
