"""One fan-out: a table's changes to the N streams that watch it here, each change framed once
per kind of viewer and wire, each stream written once per flush.

A :class:`Broadcast` serves the streams of one table at this replica that share a
schedule (the seats: the next loop turn; the spectators: paced, at most one flush per
pace, a batch of streams per loop turn, and the view now for a spectator further behind
than a write may carry). It reads the changes from the table's
feed (its ``history`` and ``current``): it holds no log of its own. A stream is a
:class:`Subscriber`:

- who it sees as (``seat_for``: its seat at each version, or none) and how its stream
  frames changes (a :class:`Wire`: gRPC ``Watch``, batched or not, ``Session``);
- what it holds (``at``: the last change written to it);
- what it is owed when it could not keep up (its :class:`Policy`).

Once the feed has applied what came together (the events of one commit, of one read
of the store) it calls :meth:`Broadcast.flush`, once. The flush writes each stream the
changes it lacks in one write: the streams that hold the same version and see the
same seats on the same wire are handed the same bytes, built once (a change's own
bytes per seat are built once by its
:class:`~president.services.gateway.streams.entries.Entry`).

A stream's :meth:`Subscriber.offer` takes a write at once or refuses it (its buffer
is full). A refused stream is written nothing until it says it drained; then a
seat (:attr:`Policy.EVERY`) is sent every change it missed, in one write, from the
feed's history, and a spectator (:attr:`Policy.NEWEST`) the view now, marked
``skipped``. A seat further behind than the history is ended with :class:`Behind`:
its stream reads the store from its version and joins again.

:class:`Mailbox` is the stream a grpc.aio handler iterates: its writes wait there
until the handler takes them.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from president.hosting.projection import Table
from president.services.gateway.streams.entries import Entry

#: Which seat a stream sees as, at each version (None: a spectator's view).
SeatOf = Callable[[Table], int | None]
#: The most bytes of changes joined into one message (a backlog travels in several).
BATCH_BYTES = 256 * 1024
#: The bytes a mailbox holds unread before it refuses more (a seat's view is a few KiB).
MAILBOX_BYTES = 256 * 1024


@dataclass(frozen=True)
class Wire:
    """How one kind of stream carries changes."""

    #: Its name: streams of one wire (and the same seats) share their bytes.
    name: str
    #: A change as ``seat`` sees it, a message of its own.
    change: Callable[[Entry, int | None], bytes]
    #: The whole view after an entry (``skipped``: states were skipped), a message.
    whole: Callable[[Entry, int | None, bool], bytes]
    #: A change as one of several joined into one message (None: one message per change).
    part: Callable[[Entry, int | None], bytes] | None
    #: Several parts as one message.
    join: Callable[[list[bytes]], bytes] = b"".join


def messages(wire: Wire, entries: Sequence[Entry], seat_for: SeatOf) -> list[bytes]:
    """Consecutive changes as the stream sends them: joined into messages of up to
    :data:`BATCH_BYTES` when the wire joins them, else one message each."""
    return framed(wire, entries, [seat_for(entry.table) for entry in entries])


def framed(wire: Wire, entries: Sequence[Entry], seats: Sequence[int | None]) -> list[bytes]:
    """:func:`messages`, each change seen as its seat in ``seats``."""
    if len(entries) == 1:
        return [wire.change(entries[0], seats[0])]
    if wire.part is None:
        return [wire.change(entry, seat) for entry, seat in zip(entries, seats, strict=True)]
    part = wire.part
    out: list[bytes] = []
    joined: list[bytes] = []
    size = 0
    for entry, seat in zip(entries, seats, strict=True):
        piece = part(entry, seat)
        if joined and size + len(piece) > BATCH_BYTES:
            out.append(wire.join(joined))
            joined, size = [], 0
        joined.append(piece)
        size += len(piece)
    out.append(wire.join(joined))
    return out


class Policy(Enum):
    """What a stream that could not keep up is sent once it drains."""

    #: Every change it missed, in order (a seat: its hand and turn must not skip).
    EVERY = "every"
    #: The view now, marked skipped (a spectator).
    NEWEST = "newest"


class Behind(Exception):
    """A seat fell further behind than the history: its stream reads the store from here."""

    def __init__(self, last: Entry) -> None:
        super().__init__(f"behind the history after version {last.version}")
        self.last = last


class Log(Protocol):
    """Where a broadcast reads the changes: a table's feed."""

    @property
    def current(self) -> Entry | None: ...

    @property
    def history(self) -> Sequence[Entry]: ...


class Subscriber(Protocol):
    """One stream of a table's changes, as the broadcast sees it."""

    @property
    def seat_for(self) -> SeatOf: ...

    @property
    def wire(self) -> Wire: ...

    @property
    def policy(self) -> Policy: ...

    #: The last change written to its stream (the broadcast moves it on each write taken).
    at: Entry
    #: Called by the stream when it can take more after a refusal (the broadcast sets it).
    drained: Callable[[], None]

    def offer(self, write: list[bytes]) -> bool:
        """Take ``write`` (its messages) as the stream's next now, or refuse it (full)."""
        ...

    def end(self, error: Exception | None) -> None:
        """The stream ends (``error``: why)."""
        ...


@dataclass(frozen=True)
class Start:
    """Where a stream starts: the entry it stands on, and what it sends first."""

    #: The entry the stream holds once its first messages are sent.
    last: Entry
    #: The changes after ``from_version`` it replays (a resume within the history).
    backlog: list[Entry]
    #: Send ``last`` whole first: ``"fresh"`` (a new stream), ``"skipped"`` (a resume from
    #: further back than the history, the view now), or ``""`` (nothing whole).
    whole: str


def start_at(current: Entry, history: Sequence[Entry], from_version: int, replay: int) -> Start:
    """How a stream asking for the changes after ``from_version`` starts: a snapshot (0),
    the history's changes after it (at most ``replay`` of them), nothing (it is current),
    or the view now marked skipped (from long past: whole, so no gap)."""
    if from_version == 0:
        return Start(current, [], "fresh")
    at = next((entry for entry in history if entry.version == from_version), None)
    if at is not None and current.version - from_version <= replay:
        return Start(at, [entry for entry in history if entry.version > from_version], "")
    if from_version == current.version:
        return Start(current, [], "")
    return Start(current, [], "skipped")


class Broadcast:
    """The streams of one table here that share a schedule, and their writes."""

    def __init__(
        self,
        log: Log,
        pace: Callable[[], float] | None = None,
        delivered: Callable[[float, int], None] | None = None,
        batch: int | None = None,
        most: Callable[[], int] | None = None,
    ) -> None:
        self._log = log
        #: Streams written per loop turn (None: all in one): the rest go in the next turns.
        self._batch = batch
        #: The most changes a :attr:`Policy.NEWEST` stream is sent in one write now; one
        #: further behind is sent the view now, marked skipped (None: no bound).
        self._most = most
        #: Told after a paced flush that wrote: how long its oldest change waited (seconds)
        #: and how many changes it delivered in all (the audience's metrics).
        self._delivered = delivered
        self._came = 0.0
        #: None: the feed flushes as it applies; else at most one flush per ``pace()``
        #: seconds (the changes meanwhile go together), after :meth:`changed`.
        self._pace = pace
        self._timer: asyncio.TimerHandle | None = None
        self._last_flush = 0.0
        self.subscribers: set[Subscriber] = set()
        self._behind: set[Subscriber] = set()
        #: The view now marked skipped, by version, wire and seat: built once for every
        #: stream that skipped there.
        self._skipped: dict[tuple[int, str, int | None], list[bytes]] = {}
        #: Writes taken so far (one per stream per flush at most).
        self.writes = 0

    @property
    def watched(self) -> bool:
        return bool(self.subscribers)

    # -- streams ---------------------------------------------------------------------------
    def join(self, subscriber: Subscriber, start: Start) -> None:
        """Add ``subscriber``, standing where ``start`` says, and write it what ``start``
        sends first: one step, so no change falls between its opening and its first flush."""
        subscriber.drained = lambda: self.drained(subscriber)
        subscriber.at = start.last
        self.subscribers.add(subscriber)
        first: list[bytes] = []
        if start.whole:
            last = start.last
            first = [
                subscriber.wire.whole(
                    last, subscriber.seat_for(last.table), start.whole == "skipped"
                )
            ]
        elif start.backlog:
            first = self._messages(subscriber, start.backlog)
            subscriber.at = start.backlog[-1]
        if first:
            self._offer(subscriber, first, subscriber.at)

    def leave(self, subscriber: Subscriber) -> None:
        self.subscribers.discard(subscriber)
        self._behind.discard(subscriber)

    def drained(self, subscriber: Subscriber) -> None:
        """``subscriber`` can take more: what it missed, by its policy."""
        if subscriber in self._behind and subscriber in self.subscribers:
            self._behind.discard(subscriber)
            self._catch_up(subscriber)

    def close(self, error: Exception | None = None) -> None:
        """Every stream ends (the table's feed closed here)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for subscriber in list(self.subscribers):
            subscriber.end(error)
        self.subscribers.clear()
        self._behind.clear()

    # -- changes ---------------------------------------------------------------------------
    def changed(self) -> None:
        """The table changed: a paced broadcast flushes now if its last flush was a pace ago,
        else once it is (one flush for every change meanwhile)."""
        if self._pace is None:
            self.flush()
            return
        if self._timer is not None or not self.subscribers:
            return
        loop = asyncio.get_running_loop()
        self._came = loop.time()
        wait = max(0.0, self._last_flush + self._pace() - self._came)
        self._timer = loop.call_later(wait, self.flush)

    def flush(self) -> None:
        """Write every stream that is not behind what it lacks: the same bytes, built once,
        to all that hold the same version and see the same seats on the same wire. (The feed
        flushes once it applied what came together: the events of one commit, one read.)"""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pace is not None:
            self._last_flush = asyncio.get_running_loop().time()
        self._write(list(self.subscribers), self._came)

    # -- internals -------------------------------------------------------------------------
    def _write(self, subscribers: list[Subscriber], came: float) -> None:
        """One flush's writes to ``subscribers`` (:data:`_batch` of them this loop turn,
        the rest in the next; ``came``: when its oldest change came)."""
        batch = self._batch
        if batch is not None and len(subscribers) > batch:
            rest = subscribers[batch:]
            subscribers = subscribers[:batch]
            asyncio.get_running_loop().call_soon(self._write, rest, came)
        newest = self._log.current
        if newest is None:
            return
        most = self._most() if self._most is not None else None
        after: dict[int, list[Entry] | None] = {}
        shared: dict[tuple[int, str, tuple[int | None, ...]], list[bytes]] = {}
        behind = self._behind
        writes, changes = self.writes, 0
        for subscriber in subscribers:
            at = subscriber.at
            if at is newest or subscriber in behind or subscriber not in self.subscribers:
                continue
            version = at.version
            entries = after.get(version, ())
            if entries == ():
                entries = after[version] = self._after(version)
            if entries is None:  # what it lacks left the history
                self._fell_behind(subscriber)
                continue
            if not entries:  # it holds the newest already
                continue
            if most is not None and len(entries) > most and subscriber.policy is Policy.NEWEST:
                self._write_skipped(subscriber, newest)
                continue
            seat_for = subscriber.seat_for
            seats = tuple([seat_for(entry.table) for entry in entries])
            key = (version, subscriber.wire.name, seats)
            write = shared.get(key)
            if write is None:
                write = shared[key] = framed(subscriber.wire, entries, seats)
            self._offer(subscriber, write, entries[-1])
            changes += len(entries)
        if self._delivered is not None and self.writes > writes:
            self._delivered(asyncio.get_running_loop().time() - came, changes)

    def _after(self, version: int) -> list[Entry] | None:
        """The changes after ``version``, oldest first (None: the history lost the next)."""
        history = self._log.history
        fresh: list[Entry] = []
        for entry in reversed(history):  # from the newest: a flush's few, not the history
            if entry.version <= version:
                fresh.reverse()
                return fresh
            fresh.append(entry)
        if not fresh or fresh[-1].version == version + 1:  # the history starts right after it
            fresh.reverse()
            return fresh
        return None

    def _messages(self, subscriber: Subscriber, entries: Sequence[Entry]) -> list[bytes]:
        return messages(subscriber.wire, entries, subscriber.seat_for)

    def _offer(self, subscriber: Subscriber, write: list[bytes], last: Entry) -> None:
        if subscriber.offer(write):
            subscriber.at = last
            self.writes += 1
        else:
            self._behind.add(subscriber)

    def _catch_up(self, subscriber: Subscriber) -> None:
        newest = self._log.current
        if newest is None or subscriber.at.version >= newest.version:
            return
        if subscriber.policy is Policy.NEWEST:
            self._write_skipped(subscriber, newest)
            return
        entries = self._after(subscriber.at.version)
        if entries is None:
            self._fell_behind(subscriber)
        else:
            self._offer(subscriber, self._messages(subscriber, entries), entries[-1])

    def _fell_behind(self, subscriber: Subscriber) -> None:
        newest = self._log.current
        if subscriber.policy is Policy.NEWEST and newest is not None:
            self._write_skipped(subscriber, newest)
            return
        self.leave(subscriber)
        subscriber.end(Behind(subscriber.at))

    def _write_skipped(self, subscriber: Subscriber, newest: Entry) -> None:
        seat = subscriber.seat_for(newest.table)
        key = (newest.version, subscriber.wire.name, seat)
        write = self._skipped.get(key)
        if write is None:
            if self._skipped and next(iter(self._skipped))[0] != newest.version:
                self._skipped.clear()  # an older version's: nobody is sent it again
            write = self._skipped[key] = [subscriber.wire.whole(newest, seat, True)]
        self._offer(subscriber, write, newest)


class Mailbox:
    """A pull stream: its writes wait here until its handler (grpc.aio) takes them, each
    message one of the stream's; it refuses more past ``limit`` bytes unread or, given a
    ``lag`` (seconds, a :attr:`Policy.NEWEST` stream's), once a write waited unread longer:
    then it drops what waits (the view now replaces those states)."""

    def __init__(
        self,
        seat_for: SeatOf,
        wire: Wire,
        policy: Policy,
        limit: int | None = None,
        lag: Callable[[], float] | None = None,
    ) -> None:
        self.seat_for = seat_for
        self.wire = wire
        self.policy = policy
        self.at: Entry
        self.drained: Callable[[], None] = lambda: None
        self._limit = MAILBOX_BYTES if limit is None else limit
        self._pending: deque[bytes] = deque()
        self._size = 0
        self._refused = False
        self._lag = lag
        #: When the oldest write waiting came (loop time).
        self._since = 0.0
        self._ready = asyncio.Event()
        #: Why the stream ended (None inside: it ended cleanly), once it did.
        self.ended: tuple[Exception | None] | None = None

    def offer(self, write: list[bytes]) -> bool:
        size = len(write[0]) if len(write) == 1 else sum(map(len, write))
        if self._pending:
            if self._lag is not None and self._stale():
                self._pending.clear()  # the states it missed: the view now replaces them
                self._size = 0
                self._refused = True
                return False
            if self._size + size > self._limit:
                self._refused = True
                return False
        else:
            self._since = asyncio.get_running_loop().time() if self._lag is not None else 0.0
        self._pending.extend(write)
        self._size += size
        self._ready.set()
        return True

    def _stale(self) -> bool:
        assert self._lag is not None
        return asyncio.get_running_loop().time() - self._since > self._lag()

    def end(self, error: Exception | None) -> None:
        self.ended = (error,)
        self._ready.set()

    def take(self) -> list[bytes]:
        """Every message waiting (none: nothing yet); a refusal's drain follows, its
        catch-up taken with them."""
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
            self._ready.clear()
        return taken

    async def wait(self) -> list[bytes]:
        """The messages waiting, waiting for one if none is; empty once the stream ended
        (:attr:`ended` says why). Loses nothing when cancelled."""
        while not self._pending and not self._refused and self.ended is None:
            await self._ready.wait()
            if not self._pending and not self._refused and self.ended is None:
                self._ready.clear()
        return self.take()
