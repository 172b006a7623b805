"""The one fan-out's proposal (:mod:`tests.support.fanout_prototype`): a table's changes
to a gRPC-like pull stream and to HTTP sockets, each change built once per viewer and wire,
each subscriber written once per flush; a spectator that cannot keep up skips to the view
now, a seat gets every change it missed, or ends when the log no longer holds them.

The changes come from a real feed (a TableHost on SQLite, as ``test_gateway_units``); the
HTTP subscribers write to real loopback sockets.
"""

from __future__ import annotations

import asyncio
import struct

import pytest

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.nats import Subjects
from president.services.gateway.streams.entries import Entry
from president.services.gateway.streams.feed import FeedHub, TableFeed
from tests.support.fanout_prototype import (
    BATCHED_WATCH,
    CONNECT_H1,
    Behind,
    Broadcast,
    Mailbox,
    Policy,
    SocketSubscriber,
)
from tests.unit.services import test_gateway_units as units

tables = units.tables


async def _started(tables: units.LocalTables) -> tuple[FeedHub, TableFeed, Broadcast]:
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    broadcast = Broadcast()
    assert feed.current is not None
    broadcast.push(feed.current)
    await asyncio.sleep(0)  # the flush of nobody
    return hub, feed, broadcast


async def _play(tables: units.LocalTables, feed: TableFeed, moves: int) -> list[Entry]:
    """The seat plays ``moves`` times; the changes it made, as the feed applied them."""
    start = feed.version
    units.play_human(tables, "t1", moves)
    await feed.catch_up()
    fresh = [entry for entry in feed.history if entry.version > start]
    assert fresh
    return fresh


def _batched(message: bytes) -> list[pb.WatchResponse]:
    response = pb.WatchResponse.FromString(message)
    return list(response.changes) or [response]


def _h1_messages(stream: bytes) -> list[pb.WatchResponse]:
    """The WatchResponses of an HTTP/1.1 chunked body of Connect envelopes."""
    body = b""
    at = 0
    while at < len(stream):
        line = stream.index(b"\r\n", at)
        size = int(stream[at:line], 16)
        body += stream[line + 2 : line + 2 + size]
        at = line + 2 + size + 2
    out = []
    at = 0
    while at < len(body):
        flags, length = struct.unpack_from(">BI", body, at)
        assert flags == 0
        out.append(pb.WatchResponse.FromString(body[at + 5 : at + 5 + length]))
        at += 5 + length
    return out


async def test_a_change_is_built_once_per_viewer_and_wire_and_written_once_per_flush(
    tables: units.LocalTables,
) -> None:
    """Spectators on a pull stream, the seat on a pull stream, spectators on HTTP sockets:
    one flush builds each change once per (viewer, wire), writes each subscriber once, and
    every subscriber of a kind gets the same bytes; only the seat sees its hand."""
    hub, feed, broadcast = await _started(tables)
    received: dict[int, bytearray] = {}

    async def reader(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        got = received.setdefault(len(received), bytearray())
        while data := await r.read(65536):
            got += data

    server = await asyncio.start_server(reader, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    loop = asyncio.get_running_loop()
    spectators = [Mailbox(None, BATCHED_WATCH, Policy.NEWEST) for _ in range(5)]
    seats = [Mailbox(0, BATCHED_WATCH, Policy.EVERY) for _ in range(3)]
    sockets = [SocketSubscriber(None, CONNECT_H1, Policy.NEWEST) for _ in range(4)]
    for subscriber in sockets:
        await loop.create_connection(lambda s=subscriber: s, "127.0.0.1", port)
    start = feed.version
    for one in (*spectators, *seats, *sockets):
        broadcast.join(one, start)  # current: nothing to send yet
    fresh = await _play(tables, feed, 2)
    assert len(fresh) >= 2
    late = Mailbox(None, BATCHED_WATCH, Policy.NEWEST)  # holds the first change already
    broadcast.join(late, fresh[0].version)
    for entry in fresh:
        broadcast.push(entry)
    assert broadcast.parts_built == 0, "nothing built before the flush"
    await asyncio.sleep(0)  # the flush: one loop turn after the changes
    assert broadcast.parts_built == 3 * len(fresh), "once per change, viewer and wire"
    assert broadcast.writes == len(spectators) + len(seats) + len(sockets) + 1
    (rest,) = late.take()
    assert [change.version for change in _batched(rest)] == [e.version for e in fresh[1:]]
    versions = [entry.version for entry in fresh]
    taken = [box.take() for box in (*spectators, *seats)]
    assert all(len(messages) == 1 for messages in taken), "one write each"
    assert len({id(messages[0]) for messages in taken[:5]}) == 1, "the spectators share bytes"
    assert len({id(messages[0]) for messages in taken[5:]}) == 1, "the seats share bytes"
    for changes in (_batched(taken[0][0]), _batched(taken[5][0])):
        assert [change.version for change in changes] == versions
    assert all(not c.view.round.hand for c in _batched(taken[0][0])), "no cards for spectators"
    assert any(c.view.round.hand for c in _batched(taken[5][0])), "the seat's own hand"
    for _ in range(100):
        if len(received) == len(sockets) and all(
            len(_h1_messages(bytes(data))) == len(fresh) for data in received.values()
        ):
            break
        await asyncio.sleep(0.01)
    for data in received.values():
        got = _h1_messages(bytes(data))
        assert [change.version for change in got] == versions
        assert got == [pb.WatchResponse.FromString(entry.watch_response(None)) for entry in fresh]
    broadcast.close()
    server.close()
    await hub.close()


async def test_a_spectator_behind_skips_to_the_view_now_and_a_seat_gets_every_change(
    tables: units.LocalTables,
) -> None:
    """Two streams whose handlers do not read: refused, they are written nothing more; once
    read, the spectator is sent the newest view marked skipped, the seat every change it
    missed, in order, in one message."""
    hub, feed, broadcast = await _started(tables)
    spectator = Mailbox(None, BATCHED_WATCH, Policy.NEWEST, limit=1)
    seat = Mailbox(0, BATCHED_WATCH, Policy.EVERY, limit=1)
    start = feed.version
    broadcast.join(spectator, 0)  # the view now: one message, which fills each mailbox
    broadcast.join(seat, 0)
    missed: list[Entry] = []
    for _ in range(3):
        fresh = await _play(tables, feed, 1)
        for entry in fresh:
            broadcast.push(entry)
        missed += fresh
        await asyncio.sleep(0)
    assert broadcast.writes == 2, "refused, then left alone while behind"
    (first,) = spectator.take()[:1]
    assert pb.WatchResponse.FromString(first).version == start
    seen = seat.take()
    assert pb.WatchResponse.FromString(seen[0]).version == start
    later = spectator.take()
    assert not later, "drained at the first take: the skipped view came with it"
    newest = missed[-1].version
    assert spectator.version == newest and seat.version == newest
    caught = _batched(seen[1])
    assert [change.version for change in caught] == [entry.version for entry in missed]
    broadcast.close()
    await hub.close()


async def test_the_skipped_view_is_what_a_spectator_gets_after_a_stall(
    tables: units.LocalTables,
) -> None:
    """What a stalled spectator is sent once it reads: the view now, marked skipped, no hand."""
    hub, feed, broadcast = await _started(tables)
    spectator = Mailbox(None, BATCHED_WATCH, Policy.NEWEST, limit=1)
    broadcast.join(spectator, 0)
    for entry in await _play(tables, feed, 2):
        broadcast.push(entry)
    await asyncio.sleep(0)
    messages = spectator.take()
    assert len(messages) == 2, "the opening view, then the skipped one on draining"
    skipped = pb.WatchResponse.FromString(messages[1])
    assert skipped.snapshot and skipped.skipped and skipped.version == feed.version
    assert not skipped.view.round.hand
    broadcast.close()
    await hub.close()


async def test_a_seat_behind_the_log_ends_to_read_the_store(tables: units.LocalTables) -> None:
    """A seat that missed more changes than the log holds is ended with Behind (its stream
    then reads the store from its version), not sent a view with a gap."""
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    broadcast = Broadcast(log=2)
    assert feed.current is not None
    broadcast.push(feed.current)
    seat = Mailbox(0, BATCHED_WATCH, Policy.EVERY, limit=1)
    broadcast.join(seat, 0)
    for entry in await _play(tables, feed, 3):
        broadcast.push(entry)
        await asyncio.sleep(0)
    assert feed.version - seat.version > 2
    stream = seat.messages()
    assert pb.WatchResponse.FromString(await anext(stream)).snapshot
    with pytest.raises(Behind) as behind:
        await anext(stream)
    assert behind.value.version == seat.version
    assert seat not in broadcast.subscribers
    await hub.close()
