"""How often a seat may react or chat, as a rule of the log: the table service refuses
what breaks it, and the audit refuses a stored log that holds it (one rule, one place).

Reactions and chat messages are events like any other, stored for good: a seat that
sent them without pause would fill its table's log and every watcher's stream. A seat
may have at most ``burst`` reactions (chat messages) whose stored times fall in any
``window``: one more is refused while the ``burst``-th last of that seat is less than
``window`` before its time. The times are the events' stored times (their metadata
``time``), which the table host takes before it decides and then stamps on the events,
so what it accepts the audit accepts, on any replica. The table keeps the last
``burst`` times of each seat (:class:`president.hosting.projection.Table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from president.hosting.events import ChatPosted, ReactionShown, TableEvent

#: The last times of each seat, by seat, oldest first.
SeatTimes = tuple[tuple[int, tuple[datetime, ...]], ...]


@dataclass(frozen=True)
class SeatRate:
    """At most ``burst`` of a seat's ``what`` in any ``window``; ``reason`` refuses more."""

    burst: int
    window: timedelta
    reason: str
    what: str

    def wait(self, recent: SeatTimes, seat: int, at: datetime) -> timedelta | None:
        """How long until ``seat`` may have one more at ``at`` (None: it may now)."""
        times = times_of(recent, seat)
        if len(times) < self.burst:
            return None
        since = at - times[-self.burst]
        return None if since >= self.window else self.window - since

    def sentence(self, wait: timedelta) -> str:
        """What a refusal says, with the ``wait``."""
        return (
            f"at most {self.burst} {self.what} every {self.window.total_seconds():g} seconds: "
            f"try again in {wait.total_seconds():.0f} s"
        )

    def after(self, recent: SeatTimes, seat: int, at: datetime) -> SeatTimes:
        """``recent`` with one more of ``seat`` at ``at`` (its last ``burst`` kept)."""
        kept = (*times_of(recent, seat), at)[-self.burst :]
        return (*((s, t) for s, t in recent if s != seat), (seat, kept))


def times_of(recent: SeatTimes, seat: int) -> tuple[datetime, ...]:
    """The last times of ``seat`` in ``recent``, oldest first."""
    return next((times for s, times in recent if s == seat), ())


#: Reactions: 5 per seat in any 10 seconds.
REACTIONS = SeatRate(5, timedelta(seconds=10), "REACTION_RATE", "reactions")
#: Chat messages: 4 per seat in any 10 seconds.
CHAT = SeatRate(4, timedelta(seconds=10), "CHAT_RATE", "chat messages")


def over_rate(
    event: TableEvent, reactions: SeatTimes, chats: SeatTimes, at: datetime
) -> tuple[SeatRate, timedelta] | None:
    """The rate ``event``, stored at ``at``, breaks after the seats' last reactions and chat
    messages, and how long until it would not (None: it breaks none)."""
    if isinstance(event, ReactionShown):
        rate, recent = REACTIONS, reactions
    elif isinstance(event, ChatPosted):
        rate, recent = CHAT, chats
    else:
        return None
    wait = rate.wait(recent, event.seat, at)
    return None if wait is None else (rate, wait)
