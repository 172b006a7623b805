"""How often a seat may react or chat: a few per window, per table and seat.

Reactions and chat messages are events like any other, stored for good: a seat
that sends them without pause would fill its table's log and every watcher's
stream. A seat may show ``burst`` reactions (chat messages) in any
``window_seconds``; more are refused RESOURCE_EXHAUSTED (REACTION_RATE,
CHAT_RATE) and change nothing. What this keeps is bounded too: the last
``burst`` times of at most ``max_seats`` seats, the least recently active
forgotten first.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from president.servicekit.errors import RETRY_AFTER, Code, ServiceError

#: Reactions a seat may show in one window.
BURST = 5
WINDOW_SECONDS = 10.0
#: Chat messages a seat may write in one window.
CHAT_BURST = 4
CHAT_WINDOW_SECONDS = 10.0
#: Seats remembered (table, seat), across tables.
MAX_SEATS = 20_000


class SeatLimit:
    """Counts each seat's recent reactions (or chat messages) and refuses those over the
    limit, with ``reason`` and a sentence naming ``what`` is counted."""

    def __init__(
        self,
        burst: int = BURST,
        window_seconds: float = WINDOW_SECONDS,
        *,
        reason: str = "REACTION_RATE",
        what: str = "reactions",
        max_seats: int = MAX_SEATS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.reason = reason
        self.what = what
        self.burst = burst
        self.window_seconds = window_seconds
        self._max_seats = max_seats
        self._clock = clock
        self._recent: OrderedDict[tuple[str, int], deque[float]] = OrderedDict()
        self._guard = threading.Lock()

    def admit(self, table_id: str, seat: int) -> None:
        """Count one of the seat's; RESOURCE_EXHAUSTED (``reason``) over the limit."""
        now = self._clock()
        key = (table_id, seat)
        with self._guard:
            times = self._recent.pop(key, None) or deque(maxlen=self.burst)
            self._recent[key] = times
            while len(self._recent) > self._max_seats:
                self._recent.popitem(last=False)
            if len(times) == self.burst and now - times[0] < self.window_seconds:
                wait = self.window_seconds - (now - times[0])
                raise ServiceError(
                    Code.RESOURCE_EXHAUSTED,
                    self.reason,
                    f"at most {self.burst} {self.what} every {self.window_seconds:g} seconds: "
                    f"try again in {wait:.0f} s",
                    {RETRY_AFTER: f"{wait:.1f}"},
                )
            times.append(now)


def chat_limit(clock: Callable[[], float] = time.monotonic) -> SeatLimit:
    """The chat's limit: CHAT_RATE past ``CHAT_BURST`` messages in ``CHAT_WINDOW_SECONDS``."""
    return SeatLimit(
        CHAT_BURST, CHAT_WINDOW_SECONDS, reason="CHAT_RATE", what="chat messages", clock=clock
    )
