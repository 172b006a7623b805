"""The one fan-out (:mod:`president.services.gateway.streams.fanout`): a table's changes to
the streams that watch it here, in order, none twice, none missed; each stream written once
per flush, the streams of one seat and wire handed the same bytes; a seat that cannot keep
up is sent every change it missed, or reads the store once the history lost them; a
spectator that cannot keep up is sent the view now, marked skipped.

The changes come from a real feed (a TableHost on SQLite, as ``test_gateway_units``).
"""

from __future__ import annotations

import asyncio
from collections import deque

import pytest

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.nats import Subjects
from president.services.gateway.streams import fanout
from president.services.gateway.streams.entries import Entry
from president.services.gateway.streams.fanout import Behind, Mailbox, Policy, Start
from president.services.gateway.streams.feed import FeedHub, TableFeed
from president.services.gateway.streams.watch import (
    BATCHED_WATCH,
    SESSION,
    WATCH,
    seat_resolver,
    watch,
)
from tests.unit.services import test_gateway_units as units

tables = units.tables
SEAT = seat_resolver("p0")
NOBODY = seat_resolver(None)


async def _feed(tables: units.LocalTables) -> tuple[FeedHub, TableFeed]:
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    return hub, await hub.feed("t1")


def _here(feed: TableFeed) -> Start:
    """A stream that holds the table's current version: nothing to send yet."""
    assert feed.current is not None
    return Start(feed.current, [], "")


async def _play(tables: units.LocalTables, feed: TableFeed, moves: int) -> list[Entry]:
    """The seat plays ``moves`` times; the changes it made, as the feed applied them (and
    wrote to the seats' streams, in one flush)."""
    start = feed.version
    units.play_human(tables, "t1", moves)
    await feed.catch_up()
    fresh = [entry for entry in feed.history if entry.version > start]
    assert fresh
    return fresh


def _changes(message: bytes) -> list[pb.WatchResponse]:
    response = pb.WatchResponse.FromString(message)
    return list(response.changes) or [response]


async def test_each_stream_is_written_once_per_flush_the_same_bytes_for_one_seat_and_wire(
    tables: units.LocalTables,
) -> None:
    """The changes applied together (one read of the store) go to each stream in one write;
    the streams that see as the same seat on the same wire are handed the very same bytes,
    joined once; another seat or wire gets its own, and only the seat sees its hand."""
    hub, feed = await _feed(tables)
    seats = [Mailbox(SEAT, BATCHED_WATCH, Policy.EVERY) for _ in range(3)]
    sessions = [Mailbox(SEAT, SESSION, Policy.EVERY) for _ in range(2)]
    readers = [Mailbox(NOBODY, BATCHED_WATCH, Policy.EVERY) for _ in range(2)]
    for box in (*seats, *sessions, *readers):
        feed.seats.join(box, _here(feed))
    writes = feed.seats.writes
    fresh = await _play(tables, feed, 2)
    assert len(fresh) >= 2
    assert feed.seats.writes == writes + len(seats) + len(sessions) + len(readers)
    taken = [box.take() for box in (*seats, *sessions, *readers)]
    assert all(len(write) == 1 for write in taken), "one message each: the changes joined"
    assert len({id(write[0]) for write in taken[:3]}) == 1, "one seat's streams share bytes"
    assert len({id(write[0]) for write in taken[3:5]}) == 1
    assert len({id(write[0]) for write in taken[5:]}) == 1
    versions = [entry.version for entry in fresh]
    seat_sees, reader_sees = _changes(taken[0][0]), _changes(taken[5][0])
    session_sees = list(pb.SessionResponse.FromString(taken[3][0]).changes)
    assert [c.version for c in seat_sees] == [c.version for c in reader_sees] == versions
    assert session_sees == seat_sees, "the same changes on either wire"
    assert any(change.view.round.hand for change in seat_sees), "the seat's own hand"
    assert all(not change.view.round.hand for change in reader_sees), "no hand for a reader"
    feed.seats.close()
    await hub.close()


async def test_a_stream_gets_every_change_in_order_none_twice_whenever_it_joined(
    tables: units.LocalTables,
) -> None:
    """Streams that joined before the changes, between two of them (a resume from the
    history) and after a flush each get exactly the changes after what they hold, in
    order, over several flushes."""
    hub, feed = await _feed(tables)
    start = feed.version
    early = Mailbox(SEAT, WATCH, Policy.EVERY)
    feed.seats.join(early, _here(feed))
    seen: dict[str, list[int]] = {"early": [], "middle": [], "late": []}
    fresh = await _play(tables, feed, 1)
    middle = Mailbox(SEAT, WATCH, Policy.EVERY)  # holds the first change already
    feed.seats.join(middle, Start(fresh[0], fresh[1:], ""))
    await asyncio.sleep(0)
    late = Mailbox(SEAT, WATCH, Policy.EVERY)
    feed.seats.join(late, _here(feed))
    for _ in range(3):
        await _play(tables, feed, 1)
        await asyncio.sleep(0)
        for name, box in (("early", early), ("middle", middle), ("late", late)):
            seen[name] += [pb.WatchResponse.FromString(data).version for data in box.take()]
    everything = list(range(start + 1, feed.version + 1))
    assert seen["early"] == everything
    assert seen["middle"] == everything[1:]
    assert seen["late"] == [v for v in everything if v > fresh[-1].version]
    feed.seats.close()
    await hub.close()


async def test_a_slow_seat_is_sent_every_change_it_missed_in_one_write(
    tables: units.LocalTables,
) -> None:
    """A stream whose handler does not read is refused and written nothing more; once
    read, a seat gets every change it missed, in order, in one message."""
    hub, feed = await _feed(tables)
    start = feed.version
    seat = Mailbox(SEAT, BATCHED_WATCH, Policy.EVERY, limit=1)
    assert feed.current is not None
    feed.seats.join(seat, Start(feed.current, [], "fresh"))  # the view: fills the mailbox
    missed: list[Entry] = []
    writes = feed.seats.writes
    for _ in range(3):
        missed += await _play(tables, feed, 1)
        await asyncio.sleep(0)
    assert feed.seats.writes == writes, "refused, then left alone while behind"
    first, *rest = seat.take()
    assert pb.WatchResponse.FromString(first).snapshot
    assert pb.WatchResponse.FromString(first).version == start
    (caught,) = rest
    assert [c.version for c in _changes(caught)] == [entry.version for entry in missed]
    assert seat.at is feed.current
    feed.seats.close()
    await hub.close()


async def test_a_slow_spectator_is_sent_the_view_now_marked_skipped(
    tables: units.LocalTables,
) -> None:
    """A spectator's stream that could not keep up is sent, once it reads, the view now
    (the same bytes for every spectator skipped there), not the states it missed."""
    hub, feed = await _feed(tables)
    slow = [Mailbox(NOBODY, BATCHED_WATCH, Policy.NEWEST, limit=1) for _ in range(2)]
    assert feed.current is not None
    for box in slow:
        feed.seats.join(box, Start(feed.current, [], "fresh"))
    for _ in range(2):
        await _play(tables, feed, 1)
        await asyncio.sleep(0)
    sent = [box.take() for box in slow]
    assert all(len(messages) == 2 for messages in sent), "the opening view, then the skipped"
    skipped = pb.WatchResponse.FromString(sent[0][1])
    assert skipped.snapshot and skipped.skipped and skipped.version == feed.version
    assert not skipped.view.round.hand
    assert sent[0][1] is sent[1][1], "built once for every spectator skipped there"
    feed.seats.close()
    await hub.close()


async def test_a_seat_behind_the_history_reads_the_store_and_goes_on_with_no_gap(
    tables: units.LocalTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A seat's mailbox that missed more changes than the feed's history holds is ended with
    Behind; its Watch stream then reads the store from the version it holds and goes on:
    every change, in order, once."""
    hub, feed = await _feed(tables)
    feed.history = deque(feed.history, maxlen=2)
    box = Mailbox(SEAT, WATCH, Policy.EVERY, limit=1)
    assert feed.current is not None
    feed.seats.join(box, Start(feed.current, [], "fresh"))
    await _play(tables, feed, 3)
    await asyncio.sleep(0)
    assert box.take()  # the view, then the refused catch-up: it ends
    assert box.ended is not None and isinstance(box.ended[0], Behind)
    assert box not in feed.seats.subscribers
    start = feed.version
    monkeypatch.setattr(fanout, "MAILBOX_BYTES", 1)  # this stream's handler reads slowly
    stream = watch(hub, "t1", 0, SEAT)
    assert pb.WatchResponse.FromString(await anext(stream)).snapshot
    for _ in range(4):  # the stream is not read meanwhile: refused, then behind the history
        await _play(tables, feed, 1)
        await asyncio.sleep(0)
    reads = tables.reads
    versions: list[int] = []
    while len(versions) < feed.version - start:
        message = await asyncio.wait_for(anext(stream), 30)
        versions.append(pb.WatchResponse.FromString(message).version)
    assert versions == list(range(start + 1, feed.version + 1))
    assert tables.reads > reads, "the changes the history lost came from the store"
    await stream.aclose()
    assert not feed.seats.subscribers
    await hub.close()


async def test_the_feed_closing_ends_every_stream_cleanly(tables: units.LocalTables) -> None:
    hub, _feed_here = await _feed(tables)
    stream = watch(hub, "t1", 0, SEAT)
    assert pb.WatchResponse.FromString(await anext(stream)).snapshot
    await hub.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(anext(stream), 5)
