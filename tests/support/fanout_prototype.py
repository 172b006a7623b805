"""One fan-out, issue 24's proposal (measured by connect_bench.py; not wired in): a
table's changes to N subscribers, each change framed once per kind of viewer and wire,
each subscriber written once per flush.

Today four paths carry a table's changes (a seat's ``Listener``, the
``Session`` outbox, the spectators' paced ``Audience``, the HTTP door's
``Crowd``). :class:`Broadcast` is the one they would share:

- a subscriber is a viewer (a seat, or ``None``: a spectator), a :class:`Wire`
  (how its stream frames a change: gRPC ``Watch``, batched, ``Session``,
  Connect over HTTP/1.1) and a :class:`Policy` for when it cannot keep up;
- on a change the broadcast logs it and schedules one flush (the next loop
  turn, or later when a pace is given): the subscribers that hold the same
  version, viewer and wire get the same bytes, built once, in one write;
- a subscriber's :meth:`Subscriber.offer` takes bytes at once or refuses
  (its buffer is full); a refused one is *behind* and is written nothing
  until it says it drained: then a seat (:attr:`Policy.EVERY`) is sent every
  change it missed, from the log, and a spectator (:attr:`Policy.NEWEST`) the
  view now, marked ``skipped`` (the same bytes for every spectator skipped
  there). A seat further behind than the log is ended with
  :class:`Behind`: its stream reads the store, as a seat's does today.

Two transports show the interface: :class:`Mailbox` (a pull stream, what a
grpc.aio or ASGI handler iterates) and :class:`SocketSubscriber` (an
asyncio transport written at once, as the door writes its spectators).
"""

from __future__ import annotations

import asyncio
import struct
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from president.services.gateway.streams.entries import Entry
from president.services.gateway.streams.watch import snapshot

#: A seat's number, or None: a spectator (every spectator sees the same).
Viewer = int | None
#: How many changes the log keeps for subscribers that fell behind.
LOG = 512
#: The bytes a mailbox holds unread before it refuses more.
MAILBOX_BYTES = 256 * 1024


@dataclass(frozen=True)
class Wire:
    """How one kind of stream carries changes."""

    #: Its name: bytes are shared by the subscribers of one wire (and viewer).
    name: str
    #: One change as ``viewer`` sees it, as a part of a write.
    part: Callable[[Entry, Viewer], bytes]
    #: Several parts as one write.
    join: Callable[[list[bytes]], bytes]
    #: The whole view after an entry, as one write (``skipped``: states were skipped).
    whole: Callable[[Entry, Viewer, bool], bytes]


def _envelope(data: bytes) -> bytes:
    return struct.pack(">BI", 0, len(data)) + data


def _chunk(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _whole(entry: Entry, viewer: Viewer, skipped: bool) -> bytes:
    return snapshot(entry, viewer, skipped=skipped)


#: gRPC ``Watch`` with ``batched``: the parts of a write join into one ``WatchResponse``.
BATCHED_WATCH = Wire("watch-batched", Entry.batched_watch_response, b"".join, _whole)
#: Connect's server stream over HTTP/1.1: each change an envelope, a write one chunk.
CONNECT_H1 = Wire(
    "connect-proto-h1",
    lambda entry, viewer: _envelope(entry.watch_response(viewer)),
    lambda parts: _chunk(b"".join(parts)),
    lambda entry, viewer, skipped: _chunk(_envelope(_whole(entry, viewer, skipped))),
)


class Policy(Enum):
    """What a subscriber that could not keep up is sent once it drains."""

    #: Every change it missed, in order (a seat: its hand and turn must not skip).
    EVERY = "every"
    #: The view now, marked skipped (a spectator).
    NEWEST = "newest"


class Behind(Exception):
    """A seat fell further behind than the log: its stream reads the store from here."""

    def __init__(self, version: int) -> None:
        super().__init__(f"behind the log after version {version}")
        self.version = version


class Subscriber(Protocol):
    """One stream of a table's changes, as the broadcast sees it."""

    viewer: Viewer
    wire: Wire
    policy: Policy
    #: The version its stream holds (the broadcast moves it on each write it takes).
    version: int
    #: Called by the stream when it can take more after a refusal (the broadcast sets it).
    drained: Callable[[], None]

    def offer(self, data: bytes) -> bool:
        """Take ``data`` as the stream's next write now, or refuse it (full)."""
        ...

    def end(self, error: Exception | None) -> None:
        """The stream ends (``error``: why)."""
        ...


class Broadcast:
    """One table's subscribers here and the log of its last changes."""

    def __init__(
        self,
        schedule: Callable[[Callable[[], None]], object] | None = None,
        log: int = LOG,
    ) -> None:
        #: How a flush is scheduled (default: the next loop turn; a pace may wait longer).
        self._schedule = schedule
        self.log: deque[Entry] = deque(maxlen=log)
        self.subscribers: set[Subscriber] = set()
        self._behind: set[Subscriber] = set()
        #: Parts built, by version, then viewer and wire.
        self._frames: dict[int, dict[tuple[Viewer, str], bytes]] = {}
        self._skipped: dict[tuple[int, Viewer, str], bytes] = {}
        self._flush_due = False
        #: Parts built (each change once per viewer and wire) and writes taken, so far.
        self.parts_built = 0
        self.writes = 0

    @property
    def newest(self) -> Entry | None:
        return self.log[-1] if self.log else None

    # -- subscribers ------------------------------------------------------------------------
    def join(self, subscriber: Subscriber, from_version: int = 0) -> None:
        """Add ``subscriber``: the view now (``from_version`` 0), the changes after
        ``from_version`` from the log, or, from further back, the view now marked skipped
        (a spectator) or :class:`Behind` (a seat)."""
        newest = self.newest
        assert newest is not None, "a broadcast is joined once its table has a change"
        subscriber.drained = lambda: self.drained(subscriber)
        subscriber.version = from_version
        self.subscribers.add(subscriber)
        if from_version == 0:
            self._write_whole(subscriber, newest, skipped=False)
        elif from_version < newest.version:
            self._catch_up(subscriber)

    def leave(self, subscriber: Subscriber) -> None:
        self.subscribers.discard(subscriber)
        self._behind.discard(subscriber)

    def drained(self, subscriber: Subscriber) -> None:
        """``subscriber`` can take more: what it missed, by its policy."""
        if subscriber in self._behind and subscriber in self.subscribers:
            self._behind.discard(subscriber)
            self._catch_up(subscriber)

    def close(self, error: Exception | None = None) -> None:
        for subscriber in list(self.subscribers):
            subscriber.end(error)
        self.subscribers.clear()
        self._behind.clear()

    # -- changes ----------------------------------------------------------------------------
    def push(self, entry: Entry) -> None:
        """A change of the table: logged, and written with the next flush."""
        if self.log:
            # the newest so far is superseded (its views lose their legal actions): its parts
            # are built again if needed, as the entry's own caches are
            self._frames.pop(self.log[-1].version, None)
            if len(self.log) == self.log.maxlen:
                self._frames.pop(self.log[0].version, None)
        self.log.append(entry)
        self._skipped.clear()
        if not self._flush_due:
            self._flush_due = True
            if self._schedule is not None:
                self._schedule(self.flush)
            else:
                asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Write every subscriber that is not behind what it lacks: the same bytes, built once,
        to all that hold the same version, viewer and wire."""
        self._flush_due = False
        newest = self.newest
        if newest is None:
            return
        shared: dict[tuple[int, Viewer, str], bytes | None] = {}
        for subscriber in list(self.subscribers):
            if subscriber in self._behind or subscriber.version >= newest.version:
                continue
            key = (subscriber.version, subscriber.viewer, subscriber.wire.name)
            if key not in shared:
                shared[key] = self._after(subscriber.version, subscriber.viewer, subscriber.wire)
            data = shared[key]
            if data is None:  # what it lacks left the log
                self._fell_behind(subscriber)
            elif subscriber.offer(data):
                subscriber.version = newest.version
                self.writes += 1
            else:
                self._behind.add(subscriber)

    # -- internals --------------------------------------------------------------------------
    def _part(self, entry: Entry, viewer: Viewer, wire: Wire) -> bytes:
        frames = self._frames.setdefault(entry.version, {})
        data = frames.get((viewer, wire.name))
        if data is None:
            data = frames[(viewer, wire.name)] = wire.part(entry, viewer)
            self.parts_built += 1
        return data

    def _after(self, version: int, viewer: Viewer, wire: Wire) -> bytes | None:
        """The changes after ``version`` as one write (None: the log no longer holds them)."""
        if not self.log or self.log[0].version > version + 1:
            return None
        parts = [self._part(e, viewer, wire) for e in self.log if e.version > version]
        return wire.join(parts)

    def _catch_up(self, subscriber: Subscriber) -> None:
        newest = self.newest
        if newest is None or subscriber.version >= newest.version:
            return
        if subscriber.policy is Policy.NEWEST:
            self._write_whole(subscriber, newest, skipped=True)
            return
        data = self._after(subscriber.version, subscriber.viewer, subscriber.wire)
        if data is None:
            self._fell_behind(subscriber)
        elif subscriber.offer(data):
            subscriber.version = newest.version
            self.writes += 1
        else:
            self._behind.add(subscriber)

    def _fell_behind(self, subscriber: Subscriber) -> None:
        if subscriber.policy is Policy.NEWEST:
            newest = self.newest
            assert newest is not None
            self._write_whole(subscriber, newest, skipped=True)
            return
        self.leave(subscriber)
        subscriber.end(Behind(subscriber.version))

    def _write_whole(self, subscriber: Subscriber, entry: Entry, *, skipped: bool) -> None:
        key = (entry.version, subscriber.viewer, subscriber.wire.name)
        data = self._skipped.get(key) if skipped else None
        if data is None:
            data = subscriber.wire.whole(entry, subscriber.viewer, skipped)
            if skipped:  # a fresh snapshot carries the clock now: built per stream
                self._skipped[key] = data
        if subscriber.offer(data):
            subscriber.version = entry.version
            self.writes += 1
        else:
            self._behind.add(subscriber)


# -- transports ----------------------------------------------------------------------------
class Mailbox:
    """A pull subscriber: its writes wait here until its stream's handler (grpc.aio, ASGI)
    takes them, each one message; it refuses more past :data:`MAILBOX_BYTES` unread."""

    def __init__(
        self, viewer: Viewer, wire: Wire, policy: Policy, limit: int = MAILBOX_BYTES
    ) -> None:
        self.viewer = viewer
        self.wire = wire
        self.policy = policy
        self.version = 0
        self.drained: Callable[[], None] = lambda: None
        self._limit = limit
        self._pending: deque[bytes] = deque()
        self._size = 0
        self._refused = False
        self._ready = asyncio.Event()
        self._ended: tuple[Exception | None] | None = None

    def offer(self, data: bytes) -> bool:
        if self._pending and self._size + len(data) > self._limit:
            self._refused = True
            return False
        self._pending.append(data)
        self._size += len(data)
        self._ready.set()
        return True

    def end(self, error: Exception | None) -> None:
        self._ended = (error,)
        self._ready.set()

    def take(self) -> list[bytes]:
        """Every write waiting (none: nothing yet); a refusal's drain follows."""
        taken = list(self._pending)
        self._pending.clear()
        self._size = 0
        self._ready.clear()
        if self._refused:
            self._refused = False
            self.drained()
            taken.extend(self._pending)
            self._pending.clear()
            self._size = 0
        return taken

    async def messages(self) -> AsyncIterator[bytes]:
        """The stream's messages, until it ends (raising its error, if any)."""
        while True:
            for data in self.take():
                yield data
            if self._ended is not None and not self._pending:
                if self._ended[0] is not None:
                    raise self._ended[0]
                return
            await self._ready.wait()


class SocketSubscriber(asyncio.Protocol):
    """A push subscriber: each write goes to its transport at once; it refuses while the
    transport's buffer is over its high-water mark, and drains when it is under again."""

    def __init__(self, viewer: Viewer, wire: Wire, policy: Policy, high: int = 64 * 1024) -> None:
        self.viewer = viewer
        self.wire = wire
        self.policy = policy
        self.version = 0
        self.drained: Callable[[], None] = lambda: None
        self._high = high
        self.transport: asyncio.Transport | None = None
        self.paused = False
        self.ended: tuple[Exception | None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.set_write_buffer_limits(high=self._high)

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self.drained()

    def offer(self, data: bytes) -> bool:
        if self.paused or self.transport is None or self.transport.is_closing():
            return False
        self.transport.write(data)
        return True

    def end(self, error: Exception | None) -> None:
        self.ended = (error,)
        if self.transport is not None:
            self.transport.close()
