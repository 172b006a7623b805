"""The audience of one table at this replica: one shared log of its changes, spectators woken
after the seats, a bounded number per event-loop turn, each taking every change it has not
sent in one go.

A table's feed hands each change to its seats' listeners at once and to its
:class:`Audience` (the watchers who hold no seat). The audience keeps the
last :data:`AUDIENCE_LIMIT` changes in one log that every spectator reads: a
spectator (:class:`Spectator`) holds nothing but its place in it, so a change
costs the audience one append, not one per spectator. Spectators waiting for
a change are woken :data:`BATCH` at a time, one batch per event-loop turn:
between two batches the loop reads its sockets, so a seat's command, its
answer and its own change never wait behind a thousand spectators' writes. A
woken spectator takes every change after its place at once: a stream that
writes slower than the table changes sends several changes per write (a
batched ``Watch``, :mod:`president.services.gateway.streams.watch`) instead of
queuing one write per change. Every spectator is sent the same bytes
(``Entry.watch_response(None)``), built once.

A table's spectators are woken together at most once per :func:`pace`: the
spectators at this replica over the writes a second it gives them
(:data:`WRITES_PER_SECOND`). A crowd of any size thus takes a bounded share of
the replica's CPU, the seats keep the rest, and a spectator sends more changes
per write the more spectators share the replica (a batched ``Watch`` sends
them in one message; a plain one, one message each).

A spectator that reads too slowly (a phone on a bad network, a client that
never reads, a replica with more spectators than its CPU serves) finds that
the change after its place left the log, or waited unread longer than
:data:`AUDIENCE_LAG`: it overflows and its stream sends it the newest view as
a snapshot marked ``skipped`` (the same bytes for every spectator skipped
there) instead of the states it missed. Its memory is its place in the log,
and it never makes anyone wait.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

from prometheus_client import Counter, Histogram

from president.servicekit.config.gateway import AudienceSettings
from president.services.gateway.streams.entries import Entry

#: Spectators woken per event-loop turn.
BATCH = 64
#: Changes the audience's log holds: a spectator further behind skips to the newest view
#: (``PRESIDENT_AUDIENCE_INBOX``; the log is shared, so it costs a reference per change).
AUDIENCE_LIMIT = AudienceSettings().inbox
#: How long a change may wait unread by a spectator before it skips to the newest view
#: (seconds; ``PRESIDENT_AUDIENCE_LAG_MS``).
AUDIENCE_LAG = AudienceSettings().lag_seconds
#: The most changes a spectator of a crowd takes at once: once the spectators here are
#: paced to :data:`CROWD_PACE` or slower, one further behind skips to the view now, one
#: message, instead (so a crowd's CPU is bounded per write too).
MOST_CHANGES = 16
#: The pace from which the spectators here are a crowd (seconds: 80 spectators at 4,000
#: writes a second); below it a spectator takes every change it has not sent.
CROWD_PACE = 0.02
#: The spectators' stream writes a second this replica allows itself
#: (``PRESIDENT_AUDIENCE_WRITES``): at about 60 µs of CPU a gRPC stream write, 4,000 a second
#: is a quarter of a core, whatever the audience's size.
WRITES_PER_SECOND = AudienceSettings().writes_per_second


def configure(settings: AudienceSettings) -> None:
    """This replica's audience settings, set once at start (the gateway's bootstrap)."""
    global AUDIENCE_LIMIT, AUDIENCE_LAG, WRITES_PER_SECOND  # noqa: PLW0603 - set once, at start
    AUDIENCE_LIMIT = settings.inbox
    AUDIENCE_LAG = settings.lag_seconds
    WRITES_PER_SECOND = settings.writes_per_second


class _Spectators:
    """How many spectators this replica's audiences hold (every table's)."""

    count = 0


def pace() -> float:
    """The least time between two wakings of a table's spectators here, in seconds: the
    spectators here over :data:`WRITES_PER_SECOND`, so they write that often at most."""
    return _Spectators.count / WRITES_PER_SECOND


DELIVERIES = Counter(
    "president_gateway_audience_deliveries", "Changes taken by spectators from their log."
)
#: How long the oldest change a spectator takes waited for it: this replica's share of a
#: spectator's delay (scale the audience out when its p99 grows past what watchers accept).
DELAY = Histogram(
    "president_gateway_audience_delay_seconds",
    "From a change's arrival at this replica to a spectator taking it (its oldest untaken).",
    buckets=(
        0.001,
        0.002,
        0.005,
        0.01,
        0.02,
        0.03,
        0.04,
        0.05,
        0.06,
        0.075,
        0.1,
        0.2,
        0.5,
        1.0,
        2.0,
    ),
)


class Audience:
    """The spectators of one table here: the shared log of its changes, and who waits on it."""

    def __init__(self) -> None:
        self.listeners: set[Spectator] = set()
        #: The last changes, oldest first, with when each came.
        self._log: deque[Entry] = deque()
        self._came: deque[float] = deque()
        #: Spectators waiting for a change, and those to wake in the next turns.
        self._idle: list[asyncio.Future[None]] = []
        self._waking: deque[asyncio.Future[None]] = deque()
        self._scheduled = False
        #: Whether a change came since the last waking started; how many wakings started.
        self.changed = False
        self.wakings = 0
        #: When the next waking may start (one per :func:`pace` at most).
        self._next_waking = 0.0

    def listener(self) -> Spectator:
        """A new spectator, registered, its place at the newest change."""
        spectator = Spectator(self)
        self.listeners.add(spectator)
        _Spectators.count += 1
        return spectator

    def leave(self, spectator: Spectator) -> None:
        """``spectator``'s stream ended."""
        if spectator in self.listeners:
            self.listeners.discard(spectator)
            _Spectators.count -= 1

    def push(self, entry: Entry) -> None:
        """Log ``entry`` and wake the spectators waiting for it, a batch per loop turn, at
        most once per :func:`pace`."""
        if not self.listeners:
            self._log.clear()  # nobody reads it: a spectator to come starts from its snapshot
            self._came.clear()
            return
        self._log.append(entry)
        self._came.append(time.monotonic())
        if len(self._log) > AUDIENCE_LIMIT:
            self._log.popleft()
            self._came.popleft()
        self.changed = True
        self._schedule()

    def _schedule(self) -> None:
        """A waking of the idle spectators, at most one per :func:`pace`."""
        if self._scheduled or not self._idle:
            return
        self._scheduled = True
        now = time.monotonic()
        start = max(now, self._next_waking)
        self._next_waking = start + pace()
        loop = asyncio.get_running_loop()
        if start > now:
            loop.call_later(start - now, self._waking_starts)
        else:
            loop.call_soon(self._waking_starts)

    def _waking_starts(self) -> None:
        self._waking.extend(self._idle)  # who waits now; who goes idle meanwhile waits a pace
        self._idle.clear()
        self.changed = False
        self.wakings += 1
        self._turn()

    def _turn(self) -> None:
        for _ in range(min(BATCH, len(self._waking))):
            waiter = self._waking.popleft()
            if not waiter.done():
                waiter.set_result(None)
        if self._waking:
            asyncio.get_running_loop().call_soon(self._turn)  # the rest next turn
            return
        self._scheduled = False
        if self.changed:  # a change came while they were woken: the next waking
            self._schedule()

    def after(self, version: int) -> list[Entry] | None:
        """The logged changes after ``version``, oldest first (empty: none yet); None when
        the one right after it left the log or waited longer than the lag allows, or, in a
        crowd, there are more than :data:`MOST_CHANGES` of them (the view now is one
        message)."""
        log = self._log
        if not log or log[-1].version <= version:
            return []
        count = min(log[-1].version - version, len(log))
        start = len(log) - count
        if log[start].version != version + 1:
            return None  # it left the log (or came before the spectator did)
        waited = time.monotonic() - self._came[start]
        DELAY.observe(waited)
        paced = pace()
        if waited > AUDIENCE_LAG + paced or (count > MOST_CHANGES and paced >= CROWD_PACE):
            return None  # it skips to the view now (a wait for the pace is no lag)
        DELIVERIES.inc(count)
        return [log[index] for index in range(start, len(log))]

    async def wait(self) -> None:
        """Until the next change is logged (or the audience closes)."""
        waiter = asyncio.get_running_loop().create_future()
        if len(self._idle) > 2 * len(self.listeners) + BATCH:  # streams that ended waiting
            self._idle = [idle for idle in self._idle if not idle.done()]
        self._idle.append(waiter)
        if self.changed:  # a change it has not taken: the next waking
            self._schedule()
        try:
            await waiter
        finally:
            if not waiter.done():
                waiter.cancel()

    @property
    def watched(self) -> bool:
        """Whether any spectator watches here."""
        return bool(self.listeners)

    def close(self) -> None:
        self._log.clear()
        self._came.clear()
        for spectator in list(self.listeners):
            spectator.closed = True
        for waiter in (*self._idle, *self._waking):
            if not waiter.done():
                waiter.set_result(None)
        self._idle.clear()
        self._waking.clear()


class Spectator:
    """One spectator's place in its audience's log."""

    audience = True

    def __init__(self, audience: Audience) -> None:
        self._audience = audience
        self.overflowed = False
        self.closed = False
        #: The waking it last took changes in (none yet).
        self._took_at = -1

    async def take(self, after: int) -> list[Entry] | None:
        """Every logged change after version ``after`` (at least one, waiting for it; once
        per waking of the audience: a change that came after this waking's take waits for
        the next); None when the spectator fell too far behind (``overflowed``) or the
        audience closed."""
        audience = self._audience
        while not self.closed:
            if self._took_at != audience.wakings or not audience.changed:
                taken = audience.after(after)
                if taken is None:
                    self.overflowed = True
                    self._took_at = audience.wakings  # the view now is this waking's write
                    return None
                if taken:
                    self._took_at = audience.wakings
                    return taken
            await audience.wait()
        return None
