"""The audience of one table at this replica: spectators served after the seats, in bounded
turns, each dropped to the newest view when it reads too slowly.

A table's feed hands each change to its seats' listeners at once and to its
:class:`Audience` (the watchers who hold no seat), which wakes them
:data:`BATCH` at a time, one batch (of one change) per event-loop turn:
between two batches the spectators woken run and the loop reads its
sockets, so a seat's command, its answer and its own change never wait
behind a thousand spectators' deliveries. Every spectator
is sent the same bytes (``Entry.watch_response(None)``), built once.

A spectator's inbox holds at most :data:`AUDIENCE_LIMIT` changes, none
unread for longer than :data:`AUDIENCE_LAG`: one that reads too slowly (a
phone on a bad network, a client that never reads, a replica with more
spectators than its CPU serves) overflows, its inbox is emptied, and its
stream sends it the newest view as a snapshot marked ``skipped`` (the same
bytes for every spectator skipped there) instead of the states it missed
(:mod:`president.services.gateway.watch`): its memory stays bounded and it
never makes anyone wait.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque

from prometheus_client import Counter

from president.services.gateway.entries import Entry, Listener

#: Spectators woken per event-loop turn.
BATCH = 64
#: Changes a spectator's inbox holds before it overflows (and skips to the newest view): the
#: changes are shared, so an inbox costs a reference each (``PRESIDENT_AUDIENCE_INBOX``).
AUDIENCE_LIMIT = int(os.environ.get("PRESIDENT_AUDIENCE_INBOX", "") or 256)
#: How long a change may wait unread in a spectator's inbox before it skips to the newest
#: view (seconds; ``PRESIDENT_AUDIENCE_LAG_MS``).
AUDIENCE_LAG = float(os.environ.get("PRESIDENT_AUDIENCE_LAG_MS", "") or 250) / 1000

DELIVERIES = Counter(
    "president_gateway_audience_deliveries", "Changes handed to spectators' inboxes."
)


class Audience:
    """The spectators of one table here, served a batch per loop turn, in version order."""

    def __init__(self) -> None:
        self.listeners: set[Listener] = set()
        #: Changes not yet handed to every spectator, oldest first.
        self._queue: deque[Entry] = deque()
        #: The change being handed out, and the spectators still to get it.
        self._current: tuple[Entry, list[Listener]] | None = None
        self._scheduled = False

    def listener(self) -> Listener:
        """A new spectator's inbox, registered."""
        listener = Listener(AUDIENCE_LIMIT, audience=True, max_lag=AUDIENCE_LAG)
        self.listeners.add(listener)
        return listener

    def push(self, entry: Entry) -> None:
        """Hand ``entry`` to every spectator, a batch per loop turn, after what is queued."""
        if not self.listeners:
            return
        self._queue.append(entry)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._turn)

    def _turn(self) -> None:
        budget = BATCH
        while budget > 0:
            if self._current is None:
                if not self._queue:
                    break
                self._current = (self._queue.popleft(), list(self.listeners))
            entry, waiting = self._current
            handed = min(budget, len(waiting))
            for _ in range(handed):
                listener = waiting.pop()
                if not listener.closed:
                    listener.push(entry)
            budget -= handed
            DELIVERIES.inc(handed)
            if not waiting:
                self._current = None
                break  # one change per turn: its readers run before the next one comes
        if self._current is not None or self._queue:
            asyncio.get_running_loop().call_soon(self._turn)  # the rest next turn
        else:
            self._scheduled = False

    def close(self) -> None:
        self._queue.clear()
        self._current = None
        for listener in list(self.listeners):
            listener.close()
