"""The audience of a table at one gateway: seats served at once, spectators woken a batch per
loop turn after them, each taking what it has not sent from one shared, bounded log; an
audience replica's role and the calls it refuses.

The feeds run on a real TableHost and SQLite store, as in ``test_gateway_units``.
"""

from __future__ import annotations

import asyncio

import pytest

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.nats import Subjects
from president.services.gateway import audience
from president.services.gateway import watch as watch_module
from president.services.gateway.audience import BATCH, Spectator
from president.services.gateway.entries import Entry
from president.services.gateway.feed import FeedHub
from president.services.gateway.roles import PLAYERS_ONLY, gateway_role
from president.services.gateway.watch import seat_resolver, watch
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
    seat, _, _ = feed.listen()
    crowd = [feed.listen(audience=True)[0] for _ in range(BATCH * 3 + 5)]
    woken: list[list[Entry]] = []

    async def spectate(spectator: Spectator) -> None:
        taken = await spectator.take(start)
        assert taken is not None
        woken.append(taken)

    tasks = [asyncio.create_task(spectate(spectator)) for spectator in crowd]
    await asyncio.sleep(0)  # every spectator waits
    units.play_human(tables, "t1", 1)
    await feed.catch_up()  # applied now: the seat has every change, no spectator ran yet
    mine = await seat.take(start)
    assert mine is not None
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
    feed.unlisten(seat)
    assert not feed.watched
    await hub.close()


async def test_a_spectator_too_far_behind_overflows_and_holds_no_changes_of_its_own(
    tables: units.LocalTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log is shared and bounded: a spectator whose next change left it, or waited
    longer than the lag allows, overflows (its stream skips to the view now); one that
    keeps up takes what it has not sent."""
    monkeypatch.setattr(audience, "AUDIENCE_LIMIT", 3)
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    start = feed.version
    behind, _, _ = feed.listen(audience=True)
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
    monkeypatch.setattr(audience, "AUDIENCE_LAG", 0.0)
    await asyncio.sleep(0.01)
    assert await behind.take(recent) is None  # unread for longer than the lag
    assert len(feed.audience._log) <= 3
    feed.unlisten(behind)
    await hub.close()


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
    monkeypatch.setattr(watch_module, "BATCH_BYTES", 4096)
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
