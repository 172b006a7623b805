"""A watcher's stream of one table: a snapshot or a resume, then every change, for its seat.

A watcher (:func:`watch`) joins the table's feed
(:mod:`president.services.gateway.streams.feed`) and, in the same step, takes the
feed's state: a fresh stream starts with a snapshot of the seat's view; a
resumed one (``from_version`` > 0) replays the entries after that version
from the feed's history (at most :data:`REPLAY_LIMIT`); from further back
(a table's thousands of reactions ago) it gets the view now, a snapshot
marked ``skipped``, instead of every state since (so a resume costs what
the watcher must see, not the table's age), then goes on live. A seat's
stream is a mailbox of the table's seats' broadcast
(:mod:`president.services.gateway.streams.fanout`): written once per loop turn with
every change it lacks; one that reads too slowly is sent what it missed from the
history, or reads the store when the history lost it. A spectator's stream (a watcher
with no seat) is a mailbox of the table's spectators' paced broadcast
(:mod:`president.services.gateway.streams.audience`): written after the seats, and
skipped to the newest view when it reads too slowly. Every change is sent
as bytes built once per seat and change: every spectator's are the same.
Every event is redacted for the watcher's seat and every view is that seat's
own (:mod:`president.hosting.seat_views`): nobody receives another seat's cards.
:func:`watch_session` is the same stream, each change serialized as a
Session stream carries it (:mod:`president.services.gateway.streams.wire`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime

from prometheus_client import Gauge

from president.events.v1 import events_pb2 as epb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.countdown import unix_ms
from president.hosting.seat_views import seat_of
from president.servicekit.config.gateway import AudienceSettings
from president.servicekit.errors import Code, ServiceError
from president.services.gateway.identity.guard import checked_wait
from president.services.gateway.streams import audience
from president.services.gateway.streams.entries import Entry, apply, with_clock
from president.services.gateway.streams.fanout import (
    Behind,
    Mailbox,
    Policy,
    SeatOf,
    Start,
    Wire,
    messages,
    start_at,
)
from president.services.gateway.streams.feed import HISTORY, FeedHub, TableFeed, history_rewound
from president.services.gateway.streams.receipts import receipt
from president.services.gateway.streams.wire import session_change
from president.services.gateway.streams.wire import session_snapshot as framed_snapshot
from president.services.gateway.upstream.ports import TablePort

#: Events per ReadEvents when a seat's watcher reads the stored events again (0: all).
READ_BATCH = 0
#: A resume replays at most this many changes from the feed's history (all of it by
#: default); one from further back gets the view now instead (a snapshot marked
#: ``skipped``), whatever came between (``PRESIDENT_WATCH_REPLAY``, :func:`configure`).
REPLAY_LIMIT = HISTORY


def configure(settings: AudienceSettings) -> None:
    """How far back a resume replays, set once at start (the gateway's bootstrap)."""
    global REPLAY_LIMIT  # noqa: PLW0603 - set once, at start
    REPLAY_LIMIT = settings.replay


WATCHERS = Gauge("president_gateway_watchers", "Watch streams open on this gateway.")

#: A watcher's rights, checked (raises the refusal that ends its stream).
Check = Callable[[], None]


def seat_resolver(player_id: str | None) -> SeatOf:
    """Which seat a watcher sees as, at each version: the player's seat, or none (readers)."""
    if player_id is None:
        return lambda _table: None
    return lambda table: seat_of(table.game, player_id)


def response(entry: Entry, seat: int | None) -> bytes:
    """A change as ``seat`` may see it, a serialized ``WatchResponse`` (built once per seat
    and change, shared by every stream of that seat: every spectator's)."""
    return entry.watch_response(seat)


def snapshot(entry: Entry, seat: int | None, skipped: bool = False) -> bytes:
    """The view that starts a fresh stream, with the server's clock now, serialized (or,
    shared, the one that replaces the states a watcher ``skipped``)."""
    if skipped:
        return entry.skipped_view(seat)
    out = pb.WatchResponse(version=entry.version, view=entry.view(seat), snapshot=True)
    out.view.server_now_unix_ms = unix_ms(datetime.now(UTC))
    return receipt(out, entry.envelope).SerializeToString()


def session_response(entry: Entry, seat: int | None) -> bytes:
    """A change as ``seat`` may see it, on a Session stream (serialized)."""
    return entry.session_response(seat)


def session_snapshot(entry: Entry, seat: int | None, skipped: bool = False) -> bytes:
    """The view that starts a fresh Session stream (or, shared, the one that replaces
    skipped states), serialized."""
    if skipped:
        return session_change(entry.skipped_view(seat))
    return framed_snapshot(
        entry.version, entry.view(seat), unix_ms(datetime.now(UTC)), entry.envelope
    )


WATCH = Wire("watch", response, snapshot, None)
BATCHED_WATCH = Wire(
    "watch-batched", response, snapshot, lambda entry, seat: entry.batched_watch_response(seat)
)
SESSION = Wire("session", session_response, session_snapshot, session_response)


def version_ahead(version: int, asked: int) -> ServiceError:
    """OUT_OF_RANGE: a resume from a version the table has not reached."""
    return ServiceError(
        Code.OUT_OF_RANGE,
        "VERSION_AHEAD",
        f"the table is at version {version}; there is no version {asked} yet",
    )


def folded(last: Entry | None, events: Sequence[epb.EventEnvelope]) -> list[Entry]:
    """Stored events folded after ``last`` (None: from the first), up to the first gap."""
    out: list[Entry] = []
    for envelope in events:
        if envelope.version != (last.version if last is not None else 0) + 1:
            break
        last = with_clock(apply(last.table if last is not None else None, envelope), last)
        out.append(last)
    return out


async def continue_from(tables: TablePort, table_id: str, last: Entry) -> list[Entry]:
    """Entries after ``last``, read from the store and folded on ``last``'s table."""
    return folded(last, await tables.read_events(table_id, last.version, READ_BATCH))


def watch(
    hub: FeedHub,
    table_id: str,
    from_version: int,
    seat_for: SeatOf,
    *,
    batched: bool = False,
    check: Check | None = None,
) -> AsyncIterator[bytes]:
    """The stream of one watcher: a snapshot (fresh) or the changes after ``from_version``,
    each a serialized ``WatchResponse`` (``batched``: the changes ready together in one).
    ``check``: the watcher's rights, checked before the first message, after each wait
    and while the table is quiet (:func:`president.services.gateway.identity.guard.checked_wait`);
    its refusal ends the stream."""
    wire = BATCHED_WATCH if batched else WATCH
    return _watch(hub, table_id, from_version, seat_for, wire, check)


def watch_session(
    hub: FeedHub, table_id: str, from_version: int, seat_for: SeatOf
) -> AsyncIterator[bytes]:
    """:func:`watch`, the changes ready together in one serialized ``SessionResponse`` (the
    Session checks its rights on its own queue)."""
    return _watch(hub, table_id, from_version, seat_for, SESSION, None)


async def _watch(
    hub: FeedHub,
    table_id: str,
    from_version: int,
    seat_for: SeatOf,
    wire: Wire,
    check: Check | None,
) -> AsyncIterator[bytes]:
    if check is not None:
        check()
    feed = await hub.feed(table_id)
    if from_version > feed.version:
        await feed.catch_up()
        if feed.closed:  # its history was rewound: a new feed, from the store
            feed = await hub.feed(table_id)
        if from_version > feed.version:
            raise version_ahead(feed.version, from_version)
    assert feed.current is not None
    stream = _audience if seat_for(feed.current.table) is None else _seat
    WATCHERS.inc()
    try:
        async for message in stream(hub, feed, from_version, seat_for, wire, check):
            yield message
    finally:
        WATCHERS.dec()


async def _seat(
    hub: FeedHub,
    feed: TableFeed,
    from_version: int,
    seat_for: SeatOf,
    wire: Wire,
    check: Check | None,
) -> AsyncIterator[bytes]:
    """A seat's stream: a mailbox of the table's seats' broadcast; every change, in order.
    Fallen further behind than the feed's history, it reads the store and joins again."""
    box = Mailbox(seat_for, wire, Policy.EVERY)
    current = feed.current
    assert current is not None
    feed.seats.join(box, start_at(current, feed.history, from_version, REPLAY_LIMIT))
    try:
        while True:
            if check is None:
                taken = await box.wait()
            else:
                taken = await checked_wait(box.wait, check)
            if taken:
                for message in taken:
                    yield message
                continue
            assert box.ended is not None  # a mailbox waits until it has messages or ends
            error = box.ended[0]
            if not isinstance(error, Behind):
                if error is not None:
                    raise error
                return
            last = error.last  # a seat reads the store, then joins again from there
            read = await continue_from(hub.tables, feed.table_id, last)
            if read:
                for message in messages(wire, read, seat_for):
                    yield message
                last = read[-1]
            if feed.closed:
                if feed.rewound:
                    raise history_rewound(feed.table_id)
                return
            box = Mailbox(seat_for, wire, Policy.EVERY)
            feed.seats.join(box, resumed(feed, last))
    finally:
        feed.seats.leave(box)
        feed.touch()


def resumed(feed: TableFeed, last: Entry) -> Start:
    """Where a seat that read the store up to ``last`` stands again: the feed's changes after
    it, or nothing more yet (the store was ahead of the feed: the feed brings the rest)."""
    current = feed.current
    assert current is not None
    if last.version >= current.version:
        return Start(last, [], "")
    backlog = [entry for entry in feed.history if entry.version > last.version]
    if not backlog or backlog[0].version != last.version + 1:
        raise ServiceError(
            Code.UNAVAILABLE,
            "STREAM_BEHIND",
            f"the stream cannot continue after version {last.version}: "
            "watch again from that version",
        )
    return Start(last, backlog, "")


async def _audience(
    hub: FeedHub,
    feed: TableFeed,
    from_version: int,
    seat_for: SeatOf,
    wire: Wire,
    check: Check | None,
) -> AsyncIterator[bytes]:
    """A spectator's stream: a mailbox of the table's spectators' broadcast; the view now when
    it read too slowly."""
    box = audience.spectator(seat_for, wire)
    current = feed.current
    assert current is not None
    feed.audience.join(box, start_at(current, feed.history, from_version, REPLAY_LIMIT))
    feed.touch()
    try:
        while True:
            if check is None:
                taken = await box.wait()
            else:
                taken = await checked_wait(box.wait, check)
            if not taken:
                assert box.ended is not None  # a mailbox waits until it has messages or ends
                if box.ended[0] is not None:
                    raise box.ended[0]
                return
            for message in taken:
                yield message
    finally:
        feed.audience.leave(box)
        audience.left()
        feed.touch()
