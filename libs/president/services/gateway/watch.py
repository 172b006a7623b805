"""Per-seat watch streams: one feed per table, fanned out to every watcher of that table.

A :class:`TableFeed` follows one table: it subscribes to the table's NATS
subject first, then reads the stored events from the table service and folds
them into a local :class:`~president.tables.Table`. After that it applies
envelopes strictly in version order: one at or below its version is dropped
(no duplicate), one that skips ahead makes it read the missing ones from the
store (no gap). Each applied event becomes an :class:`Entry` (the event and
the table after it), kept in a short history and handed to the listeners.

A watcher (:func:`watch`) registers as a listener and, in the same step,
takes the feed's state: a fresh stream starts with a snapshot of the seat's
view; a resumed one (``from_version`` > 0) replays the entries after that
version from the history, or from the store when they are older, then goes on
live. Every event is redacted for the watcher's seat and every view is that
seat's own (:mod:`president.viewproto`): nobody receives another seat's cards.

Without NATS (not reachable yet, or lost), feeds poll the store, so a watcher
never waits on the message bus for correctness, only for speed.

While a play or pass through this gateway is being committed, its feed works
out what it will most likely commit (:meth:`TableFeed.foresee`): the engine's
events on the feed's table, the table after each, and every seat's view,
serialized. The answer then finds the watchers' changes built. They are used
only for the very events foreseen (same type, same bytes, following the very
table they were worked out from); any other event is folded and shown as it
always is. Nothing foreseen is shown before the table service's answer brings
the committed events. Building the views was a third of the gateway's part of
a play; at one table this takes 0.1-0.2 ms off a play's way to its watchers.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
import structlog
from google.protobuf.message import Message
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from prometheus_client import Gauge

from president import codec
from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.projection import Table, fold, fold_next
from president.hosting.seat_views import public_view, redact, seat_of, seat_part, seat_view
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import mask_of
from president.servicekit.errors import ServiceError
from president.servicekit.nats import Subjects, version_in
from president.services.gateway.upstream import TablePort

T = TypeVar("T")
HISTORY = 512
LISTENER_LIMIT = 4096
POLL_SECONDS = 2.0
POLL_SECONDS_WITHOUT_NATS = 0.25
IDLE_SECONDS = 60.0
NUDGE_SECONDS = 0.1
READ_BATCH = 0


WATCHERS = Gauge("president_gateway_watchers", "Watch streams open on this gateway.")
FEEDS = Gauge(
    "president_gateway_feeds", "Tables this gateway follows (one NATS subscription each)."
)


#: The tag of SessionResponse.changes on the wire: its field number, length-delimited.
_CHANGES_TAG = bytes([pb.SessionResponse.DESCRIPTOR.fields_by_name["changes"].number << 3 | 2])


def session_change(change: bytes) -> bytes:
    """A serialized ``WatchResponse`` as a serialized ``SessionResponse`` carrying it.

    Serialized messages of one type concatenate into one message whose
    repeated fields hold all their elements, so a session sends several
    changes (and results) by joining their bytes.
    """
    size = len(change)
    length = bytearray()
    while size > 0x7F:
        length.append(size & 0x7F | 0x80)
        size >>= 7
    length.append(size)
    return _CHANGES_TAG + bytes(length) + change


def not_found(table_id: str) -> ServiceError:
    """NOT_FOUND for a table nobody created."""
    return ServiceError(grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND", f"no table {table_id!r}")


@dataclass
class Entry:
    """One applied event: its envelope, its message, and the table after it."""

    envelope: epb.EventEnvelope
    message: Message
    table: Table
    _public: gpb.TableView | None = None
    _views: dict[int | None, gpb.TableView] = field(default_factory=dict)
    _events: dict[int | None, epb.EventEnvelope] = field(default_factory=dict)
    _responses: dict[int | None, pb.WatchResponse] = field(default_factory=dict)
    _sessions: dict[int | None, bytes] = field(default_factory=dict)
    _public_change: bytes | None = None
    #: Each seat's own part of its view, serialized ahead (a foreseen change).
    _view_parts: dict[int | None, bytes] | None = None

    @property
    def version(self) -> int:
        return self.envelope.version

    def _public_view(self) -> gpb.TableView:
        if self._public is None:
            self._public = public_view(self.table)
        return self._public

    def view(self, seat: int | None) -> gpb.TableView:
        """The table after this event as ``seat`` sees it (computed once per seat)."""
        built = self._responses.get(seat)
        if built is not None:
            return built.view
        cached = self._views.get(seat)
        if cached is None:
            cached = self._views[seat] = seat_view(self._public_view(), self.table, seat)
        return cached

    def response(self, seat: int | None) -> pb.WatchResponse:
        """The change as ``seat`` sees it (built once per seat, shared by its watchers)."""
        cached = self._responses.get(seat)
        if cached is None:
            # The seat's view is built in place: building it apart and copying it
            # in would cost as much again.
            cached = self._responses[seat] = pb.WatchResponse(version=self.version)
            cached.event.CopyFrom(self.event(seat))
            view = self._views.get(seat)
            if view is not None:
                cached.view.CopyFrom(view)
            else:
                seat_view(self._public_view(), self.table, seat, into=cached.view)
        return cached

    def session_response(self, seat: int | None) -> bytes:
        """The change as ``seat`` sees it, as a Session stream carries it, serialized.

        The ``WatchResponse`` is built from two serialized parts, the way
        protobuf merges a message that appears twice: what everyone sees
        (serialized once per change) followed by what only this seat sees
        (its event and :func:`seat_part`). That spares a copy and a
        serialization of the whole view per seat. Then it is framed as a
        ``SessionResponse`` holding that one change (:func:`session_change`).
        """
        cached = self._sessions.get(seat)
        if cached is None:
            if self._public_change is None:
                self._public_change = public_change(self.version, self.table)
            own = pb.WatchResponse()
            own.event.CopyFrom(self.event(seat))
            prepared = self._view_parts.get(seat) if self._view_parts is not None else None
            if prepared is not None:
                cached = session_change(self._public_change + prepared + own.SerializeToString())
            else:
                if seat is not None:
                    own.view.CopyFrom(seat_part(self.table, seat))
                cached = session_change(self._public_change + own.SerializeToString())
            self._sessions[seat] = cached
        return cached

    def event(self, seat: int | None) -> epb.EventEnvelope:
        """The envelope with other seats' cards removed."""
        cached = self._events.get(seat)
        if cached is None:
            shown = redact(self.message, seat)
            if shown is self.message:
                cached = self.envelope
            else:
                cached = epb.EventEnvelope()
                cached.CopyFrom(self.envelope)
                cached.payload = shown.SerializeToString(deterministic=True)
            self._events[seat] = cached
        return cached


def public_change(version: int, table: Table) -> bytes:
    """What everyone sees of a change, serialized: its version and the public view."""
    public = pb.WatchResponse(version=version)
    public.view.CopyFrom(public_view(table))
    return public.SerializeToString()


def view_part(table: Table, seat: int | None) -> bytes:
    """What only ``seat`` sees of the table, as a serialized ``WatchResponse`` to append."""
    if seat is None:
        return b""
    return pb.WatchResponse(view=seat_part(table, seat)).SerializeToString()


@dataclass(frozen=True)
class Foreseen:
    """An event a command through this gateway will most likely commit, worked out ahead."""

    #: The table it follows: it is used only on top of this very table.
    previous: Table
    type: str
    payload: bytes
    table: Table
    public_change: bytes
    view_parts: dict[int | None, bytes]


def foreseeable(command: gpb.Command) -> rnd.Command | None:
    """The engine command of a play or pass, whose events a feed can foresee; else None."""
    kind = command.WhichOneof("kind")
    if kind == "play_cards":
        play = command.play_cards
        version = play.trick_version if play.HasField("trick_version") else None
        try:
            return rnd.PlayCards(play.seat, mask_of(list(play.cards)), version)
        except ValueError:
            return None
    if kind == "pass":
        passing = getattr(command, "pass")
        version = passing.trick_version if passing.HasField("trick_version") else None
        return rnd.Pass(passing.seat, version)
    return None


def parse(envelope: epb.EventEnvelope) -> tuple[Message, Any]:
    """The payload message and the engine event (or message) of an envelope."""
    message = codec.parse(envelope.type, envelope.payload)
    return message, codec.to_engine(message)


def apply(table: Table | None, envelope: epb.EventEnvelope) -> Entry:
    """Fold one envelope into a table (None before the first event)."""
    message, event = parse(envelope)
    return Entry(envelope, message, fold_next(table, event, envelope))


class Listener:
    """A watcher's inbox of entries; it overflows instead of growing without end."""

    def __init__(self) -> None:
        self._entries: deque[Entry] = deque()
        self._ready = asyncio.Event()
        self.overflowed = False
        self.closed = False

    def push(self, entry: Entry) -> None:
        if len(self._entries) >= LISTENER_LIMIT:
            self._entries.clear()
            self.overflowed = True
        else:
            self._entries.append(entry)
        self._ready.set()

    def close(self) -> None:
        self.closed = True
        self._ready.set()

    async def next(self) -> Entry | None:
        """The next entry; None after an overflow (the watcher re-reads the store) or a close."""
        while not self._entries:
            if self.overflowed or self.closed:
                return None
            self._ready.clear()
            await self._ready.wait()
        return self._entries.popleft()


class TableFeed:
    """One table followed in version order, shared by every watcher of the table here."""

    def __init__(self, table_id: str, tables: TablePort, subject: str) -> None:
        self.table_id = table_id
        self.subject = subject
        self._tables = tables
        self.current: Entry | None = None
        self.history: deque[Entry] = deque(maxlen=HISTORY)
        self.listeners: set[Listener] = set()
        self._pending: dict[int, epb.EventEnvelope] = {}
        self._inbox: asyncio.Queue[epb.EventEnvelope | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._subscription: Subscription | None = None
        self._sync = asyncio.Lock()
        self.last_used = time.monotonic()
        self.last_message = time.monotonic()
        self.last_poll = time.monotonic()
        self._catch_up_queued = False
        self.closed = False
        self._foreseen: dict[int, Foreseen] = {}

    # -- state ----------------------------------------------------------------
    @property
    def version(self) -> int:
        return self.current.version if self.current is not None else 0

    @property
    def table(self) -> Table:
        assert self.current is not None
        return self.current.table

    def touch(self) -> None:
        self.last_used = time.monotonic()

    # -- life -----------------------------------------------------------------
    async def start(self, client: Client | None) -> None:
        """Subscribe (when NATS is there), then load the stored events."""
        if client is not None:
            await self.subscribe(client)
        await self.catch_up()
        if self.current is None:
            await self.close()
            raise not_found(self.table_id)
        self._task = asyncio.create_task(self._run(), name=f"feed-{self.table_id}")

    async def subscribe(self, client: Client) -> None:
        """Receive the table's envelopes from NATS from now on."""
        if self._subscription is not None:
            return

        async def received(message: Msg) -> None:
            self.last_message = time.monotonic()
            known = version_in(message.headers)
            if known is not None and known <= self.version:
                return  # shown already (a command's answer brought it): not parsed again
            try:
                envelope = epb.EventEnvelope.FromString(message.data)
            except Exception:
                return
            self._inbox.put_nowait(envelope)

        self._subscription = await client.subscribe(self.subject, cb=received)
        await client.flush(timeout=5)
        self.request_catch_up()  # catch up with what was stored before the subscription

    @property
    def subscribed(self) -> bool:
        return self._subscription is not None

    def unsubscribed(self) -> None:
        """NATS went away: poll until it is back."""
        self._subscription = None

    async def close(self) -> None:
        self.closed = True
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
            self._subscription = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        for listener in list(self.listeners):
            listener.close()

    def request_catch_up(self) -> None:
        """Read the store for anything newer (a poll, a nudge after a command)."""
        if not self._catch_up_queued:
            self._catch_up_queued = True
            self._inbox.put_nowait(None)

    async def _run(self) -> None:
        log = structlog.get_logger().bind(service="gateway")
        while True:
            item = await self._inbox.get()
            try:
                if item is None:
                    self._catch_up_queued = False
                    await self.catch_up()
                else:
                    await self._received(item)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the store or the table service hiccupped: poll again
                log.warning("feed catch-up failed", table_id=self.table_id, error=repr(error))
                await asyncio.sleep(0.2)
                self.request_catch_up()

    # -- applying ---------------------------------------------------------------
    async def _received(self, envelope: epb.EventEnvelope) -> None:
        if envelope.version <= self.version:
            return  # already applied: no duplicate
        if envelope.version == self.version + 1 and self.current is not None:
            self._apply(envelope)
            self._drain_pending()
            return
        self._pending[envelope.version] = envelope
        await self.catch_up()  # a gap: read what is missing from the store

    async def catch_up(self) -> None:
        """Apply every stored event after the current version."""
        async with self._sync:
            events = await self._tables.read_events(self.table_id, self.version, READ_BATCH)
            for envelope in events:
                if envelope.version == self.version + 1:
                    self._apply(envelope)
            self._drain_pending()

    def offer(self, envelopes: Sequence[epb.EventEnvelope]) -> None:
        """Events a command through this gateway committed: apply them now, in order.

        NATS brings them too, a little later: dropped then as duplicates.
        """
        for envelope in envelopes:
            if envelope.version > self.version:
                self._pending[envelope.version] = envelope
        if self.current is not None:
            self._drain_pending()

    def _drain_pending(self) -> None:
        while self.version + 1 in self._pending:
            self._apply(self._pending.pop(self.version + 1))
        for version in [v for v in self._pending if v <= self.version]:
            del self._pending[version]

    def foresee(self, command: rnd.Command) -> None:
        """Work out what ``command`` will most likely commit, views included (see the
        module's doc). Nothing, if the engine refuses it on this feed's table."""
        self._foreseen = {}
        current = self.current
        if current is None or self.closed:
            return
        foreseen: dict[int, Foreseen] = {}
        table = current.table
        try:
            events = g.decide(current.table.game, command)
            for version, event in enumerate(events, start=current.version + 1):
                message = codec.encode(event)
                after = fold(table, event, version)
                seats: list[int | None] = [*range(len(after.game.seats)), None]
                foreseen[version] = Foreseen(
                    previous=table,
                    type=codec.type_name(message),
                    payload=message.SerializeToString(deterministic=True),
                    table=after,
                    public_change=public_change(version, after),
                    view_parts={seat: view_part(after, seat) for seat in seats},
                )
                table = after
        except Exception:
            return  # refused here (the table service says why), or unforeseeable
        self._foreseen = foreseen

    def _entry(self, envelope: epb.EventEnvelope) -> Entry:
        """The entry of the next envelope: the foreseen one if it is exactly that."""
        foreseen = self._foreseen.pop(envelope.version, None)
        previous = self.current.table if self.current is not None else None
        if (
            foreseen is not None
            and previous is foreseen.previous
            and envelope.type == foreseen.type
            and envelope.payload == foreseen.payload
        ):
            message = codec.parse(envelope.type, envelope.payload)
            return Entry(
                envelope,
                message,
                foreseen.table,
                _public_change=foreseen.public_change,
                _view_parts=foreseen.view_parts,
            )
        if foreseen is not None:
            self._foreseen.clear()  # something else happened
        return apply(previous, envelope)

    def _apply(self, envelope: epb.EventEnvelope) -> None:
        entry = self._entry(envelope)
        self.current = entry
        self.history.append(entry)
        for listener in self.listeners:
            listener.push(entry)

    # -- watchers ---------------------------------------------------------------
    def listen(self) -> tuple[Listener, Entry, list[Entry]]:
        """Register a listener; returns it with the current entry and the history, atomically."""
        listener = Listener()
        self.listeners.add(listener)
        self.touch()
        assert self.current is not None
        return listener, self.current, list(self.history)

    def unlisten(self, listener: Listener) -> None:
        self.listeners.discard(listener)
        self.touch()


class FeedHub:
    """The feeds of this gateway, by table: created on first use, dropped when idle."""

    def __init__(self, tables: TablePort, subjects: Subjects) -> None:
        self._tables = tables
        self._subjects = subjects
        self._feeds: dict[str, TableFeed] = {}
        self._starting: dict[str, asyncio.Future[TableFeed]] = {}
        self.client: Client | None = None

    @property
    def tables(self) -> TablePort:
        return self._tables

    def existing(self, table_id: str) -> TableFeed | None:
        feed = self._feeds.get(table_id)
        if feed is not None:
            feed.touch()
        return feed

    async def feed(self, table_id: str) -> TableFeed:
        """The table's feed, started if needed (NOT_FOUND for an unknown table)."""
        feed = self.existing(table_id)
        if feed is not None:
            return feed
        starting = self._starting.get(table_id)
        if starting is not None:
            return await asyncio.shield(starting)
        future: asyncio.Future[TableFeed] = asyncio.get_running_loop().create_future()
        self._starting[table_id] = future
        try:
            feed = TableFeed(table_id, self._tables, self._subjects.table(table_id))
            await feed.start(self.client)
            self._feeds[table_id] = feed
            FEEDS.set(len(self._feeds))
            future.set_result(feed)
            return feed
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" warning
            raise
        finally:
            del self._starting[table_id]

    def foresee(self, table_id: str, command: rnd.Command) -> None:
        """A play or pass through this gateway is on its way: its feed works it out ahead."""
        feed = self._feeds.get(table_id)
        if feed is not None:
            feed.foresee(command)

    def nudge(
        self, table_id: str, version: int, committed: Sequence[epb.EventEnvelope] = ()
    ) -> None:
        """A command through this gateway reached ``version``: make sure watchers get there.

        ``committed``: the events it committed, shown to the watchers at once.
        """
        feed = self._feeds.get(table_id)
        if feed is None:
            return
        feed.offer(committed)
        if feed.version >= version:
            return

        def check() -> None:
            if not feed.closed and feed.version < version:
                feed.request_catch_up()

        asyncio.get_running_loop().call_later(NUDGE_SECONDS, check)

    async def attach(self, client: Client) -> None:
        """NATS is (back) up: every feed subscribes and catches up."""
        self.client = client
        for feed in list(self._feeds.values()):
            feed.unsubscribed()
            with contextlib.suppress(Exception):
                await feed.subscribe(client)

    def detach(self) -> None:
        """NATS is gone: feeds poll the store until it is back."""
        for feed in self._feeds.values():
            feed.unsubscribed()

    async def maintain(self) -> None:
        """Background: poll feeds that may have missed messages, drop idle ones."""
        while True:
            await asyncio.sleep(POLL_SECONDS_WITHOUT_NATS)
            now = time.monotonic()
            for table_id, feed in list(self._feeds.items()):
                if not feed.listeners and now - feed.last_used > IDLE_SECONDS:
                    del self._feeds[table_id]
                    FEEDS.set(len(self._feeds))
                    await feed.close()
                elif not feed.subscribed:
                    feed.request_catch_up()
                elif feed.listeners and now - max(feed.last_message, feed.last_poll) > POLL_SECONDS:
                    feed.last_poll = now
                    feed.request_catch_up()

    async def close(self) -> None:
        for feed in list(self._feeds.values()):
            await feed.close()
        self._feeds.clear()


# --------------------------------------------------------------------------- watching
SeatOf = Callable[[Table], int | None]


def seat_resolver(player_id: str | None) -> SeatOf:
    """Which seat a watcher sees as, at each version: the player's seat, or none (readers)."""
    if player_id is None:
        return lambda _table: None
    return lambda table: seat_of(table.game, player_id)


def response(entry: Entry, seat: int | None) -> pb.WatchResponse:
    """A change as ``seat`` may see it."""
    return entry.response(seat)


def snapshot(entry: Entry, seat: int | None) -> pb.WatchResponse:
    """The view that starts a fresh stream."""
    return pb.WatchResponse(version=entry.version, view=entry.view(seat), snapshot=True)


def session_response(entry: Entry, seat: int | None) -> bytes:
    """A change as ``seat`` may see it, on a Session stream (serialized)."""
    return entry.session_response(seat)


def session_snapshot(entry: Entry, seat: int | None) -> bytes:
    """The view that starts a fresh Session stream (serialized)."""
    out = pb.SessionResponse()
    out.changes.add(version=entry.version, snapshot=True).view.CopyFrom(entry.view(seat))
    return out.SerializeToString()


#: How a watcher's stream shapes each change and its first snapshot.
Shape = Callable[[Entry, int | None], T]


async def rebuild(tables: TablePort, table_id: str, after: int) -> tuple[Entry | None, list[Entry]]:
    """From the store: the entry at ``after`` (None for 0) and every entry after it."""
    events = await tables.read_events(table_id, 0, READ_BATCH)
    at: Entry | None = None
    later: list[Entry] = []
    table: Table | None = None
    for envelope in events:
        if envelope.version != (table.version if table is not None else 0) + 1:
            break
        entry = apply(table, envelope)
        table = entry.table
        if entry.version <= after:
            at = entry
        else:
            later.append(entry)
    return at, later


async def continue_from(tables: TablePort, table_id: str, last: Entry) -> list[Entry]:
    """Entries after ``last``, read from the store and folded on ``last``'s table."""
    events = await tables.read_events(table_id, last.version, READ_BATCH)
    out: list[Entry] = []
    table = last.table
    for envelope in events:
        if envelope.version != table.version + 1:
            break
        entry = apply(table, envelope)
        table = entry.table
        out.append(entry)
    return out


def watch(
    hub: FeedHub, table_id: str, from_version: int, seat_for: SeatOf
) -> AsyncIterator[pb.WatchResponse]:
    """The stream of one watcher: a snapshot (fresh) or the changes after ``from_version``."""
    return _watch(hub, table_id, from_version, seat_for, response, snapshot)


def watch_session(
    hub: FeedHub, table_id: str, from_version: int, seat_for: SeatOf
) -> AsyncIterator[bytes]:
    """:func:`watch`, each change a serialized ``SessionResponse``."""
    return _watch(hub, table_id, from_version, seat_for, session_response, session_snapshot)


async def _watch(
    hub: FeedHub,
    table_id: str,
    from_version: int,
    seat_for: SeatOf,
    change: Shape[T],
    first: Shape[T],
) -> AsyncIterator[T]:
    feed = await hub.feed(table_id)
    if from_version > feed.version:
        await feed.catch_up()
        if from_version > feed.version:
            raise ServiceError(
                grpc.StatusCode.OUT_OF_RANGE,
                "VERSION_AHEAD",
                f"the table is at version {feed.version}; there is no version {from_version} yet",
            )
    listener, current, history = feed.listen()
    WATCHERS.inc()
    try:
        last: Entry
        backlog: Sequence[Entry]
        if from_version == 0:
            last = current
            yield first(current, seat_for(current.table))
            backlog = ()
        else:
            at = next((entry for entry in history if entry.version == from_version), None)
            if at is not None:
                backlog = [entry for entry in history if entry.version > from_version]
            else:  # older than the history: fold the stored events again
                at, backlog = await rebuild(hub.tables, table_id, from_version)
                assert at is not None
            last = at
        for entry in backlog:
            if entry.version == last.version + 1:
                yield change(entry, seat_for(entry.table))
                last = entry
        while True:
            item = await listener.next()
            if item is None:
                if listener.closed:
                    return
                listener.overflowed = False  # too slow a reader: read the store instead
                for missed in await continue_from(hub.tables, table_id, last):
                    yield change(missed, seat_for(missed.table))
                    last = missed
                continue
            if item.version <= last.version:
                continue  # seen already: no duplicate
            if item.version > last.version + 1:  # cannot happen with one feed; be safe
                for missed in await continue_from(hub.tables, table_id, last):
                    if missed.version >= item.version:
                        break
                    yield change(missed, seat_for(missed.table))
                    last = missed
            if item.version != last.version + 1:
                raise ServiceError(
                    grpc.StatusCode.UNAVAILABLE,
                    "STREAM_BEHIND",
                    f"the stream cannot continue after version {last.version}: "
                    "watch again from that version",
                )
            yield change(item, seat_for(item.table))
            last = item
    finally:
        feed.unlisten(listener)
        WATCHERS.dec()
