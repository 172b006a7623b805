"""The HTTP spectators of one table at this replica, written to together.

A change is framed once per encoding (:func:`~president.services.gateway.api.connect.framed`)
and the same bytes go to every spectator that holds the version before it, at
most once per :data:`FLUSH_SECONDS`; a spectator that fell behind (its socket
full) gets the view now, marked ``skipped``, once it drains. The spectators
are the door's connections
(:class:`~president.services.gateway.api.audience_http.SpectatorStream`),
seen here as the little a crowd writes to (:class:`Spectator`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

from president.servicekit.errors import DRAINING, Code, ServiceError
from president.services.gateway.api.connect import Codec, framed
from president.services.gateway.streams.audience import DELAY, DELIVERIES
from president.services.gateway.streams.entries import Entry
from president.services.gateway.streams.feed import TableFeed, history_rewound
from president.services.gateway.streams.watch import snapshot, start_at

#: Changes within this long of a spectator's last write go out with the next: a flush
#: writes once to every spectator.
FLUSH_SECONDS = 0.04


class Spectator(Protocol):
    """One spectator's stream as its crowd sees it: where it is, and where to write."""

    codec: Codec
    #: The version it was last written (its next change is the one after).
    version: int
    #: Its socket is full: nothing more is written until it drains.
    paused: bool
    #: It missed changes while paused: the view now once it drains.
    behind: bool

    def begin(self, opening: bytes, version: int) -> None: ...
    def write(self, data: bytes, version: int) -> None: ...
    def end(self, error: ServiceError | None) -> None: ...


def draining() -> ServiceError:
    """Every stream's end when the replica stops: resume from the last version."""
    return ServiceError(Code.UNAVAILABLE, "SERVER_DRAINING", DRAINING)


class Crowd:
    """The HTTP spectators of one table at this replica: every change framed once per
    encoding and written to each of them, at most once per flush."""

    def __init__(self, feed: TableFeed) -> None:
        self.feed = feed
        self.streams: set[Spectator] = set()
        self._pending: list[Entry] = []
        self._came = 0.0
        self._last_flush = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._skipped: dict[tuple[int, Codec], bytes] = {}
        feed.audience.sinks.append(self)

    @property
    def watching(self) -> bool:
        return bool(self.streams)

    def join(self, stream: Spectator, from_version: int) -> None:
        """Start ``stream`` where it asked (fresh, resumed or skipped) and add it: one step,
        so no change falls between its opening and its first flush."""
        current = self.feed.current
        assert current is not None
        start = start_at(current, self.feed.history, from_version)
        opening = [entry.watch_response(None) for entry in start.backlog]
        if start.whole:
            opening = [snapshot(current, None, skipped=start.whole == "skipped")]
        stream.begin(framed(stream.codec, opening) if opening else b"", current.version)
        self.streams.add(stream)

    def leave(self, stream: Spectator) -> None:
        self.streams.discard(stream)

    def push(self, entry: Entry) -> None:
        """A change came: write it with the next flush (now, if the last was long enough ago)."""
        if not self.streams:
            return
        if not self._pending:
            self._came = time.monotonic()
        self._pending.append(entry)
        if self._timer is None:
            wait = max(0.0, self._last_flush + FLUSH_SECONDS - self._came)
            self._timer = asyncio.get_running_loop().call_later(wait, self.flush)

    def flush(self) -> None:
        """Write the pending changes to every spectator: the same bytes to all that hold the
        version before them (framed once per encoding), the view now to one that fell behind."""
        self._timer = None
        self._last_flush = time.monotonic()
        entries, self._pending = self._pending, []
        if not entries:
            return
        first, last = entries[0].version, entries[-1].version
        shared: dict[Codec, bytes] = {}
        written = 0
        for stream in list(self.streams):
            if stream.version >= last:
                continue
            if stream.paused:
                stream.behind = True  # its socket is full: the view now once it drains
                continue
            if stream.version == first - 1:
                data = shared.get(stream.codec)
                if data is None:
                    data = shared[stream.codec] = framed(
                        stream.codec, (entry.watch_response(None) for entry in entries)
                    )
            elif stream.version >= first:  # joined between two of them
                data = framed(
                    stream.codec,
                    (e.watch_response(None) for e in entries if e.version > stream.version),
                )
            else:
                self.catch_up(stream)
                continue
            stream.write(data, last)
            written += 1
        if written:
            DELAY.observe(time.monotonic() - self._came)
            DELIVERIES.inc(written * len(entries))

    def catch_up(self, stream: Spectator) -> None:
        """The view now, marked ``skipped``, for a spectator that missed changes (the same
        bytes for every spectator skipped at that version)."""
        current = self.feed.current
        stream.behind = False
        if current is None or stream.version >= current.version:
            return
        key = (current.version, stream.codec)
        data = self._skipped.get(key)
        if data is None:
            self._skipped.clear()
            data = self._skipped[key] = framed(stream.codec, [current.skipped_view(None)])
        stream.write(data, current.version)

    def close(self) -> None:
        """The table's feed closed here (the replica stops, or the table's history was
        rewound): every stream ends."""
        if self._timer is not None:
            self._timer.cancel()
        ending = history_rewound(self.feed.table_id) if self.feed.rewound else draining()
        for stream in list(self.streams):
            stream.end(ending)
        self.streams.clear()
