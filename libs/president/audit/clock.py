"""The log's times: they never go backwards, and no timeout comes before its deadline.

Each stored event's metadata ``time`` is its commit time. Within a stream the
times never go backwards. A ``Timeout`` command is the timer's: it may come
only once the deadline the timer service would have set has passed (turn,
takeover, rapid and exchange timers, from the options and the event times), which
:mod:`president.hosting.deadlines` computes, the one source of those rules.
``TOLERANCE`` allows for the timer's and the table's clocks differing a little.
:class:`TimeCheck` raises :class:`~president.audit.reports.Found` at the first
event that breaks one.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from president.audit.reports import Found
from president.hosting import deadlines
from president.hosting.projection import Table
from president.store import StoredEvent

TOLERANCE = timedelta(seconds=1)
"""How much earlier than its deadline a timeout may be stamped (the clocks of two services)."""

_TIMER_WORDS = {
    deadlines.TURN: "turn timer",
    deadlines.TAKEOVER: "takeover timer",
    deadlines.RAPID: "rapid timer",
    deadlines.EXCHANGE: "exchange timer",
}


class TimeCheck:
    """The times of one table's log as the walk meets them, and the timer they imply."""

    def __init__(self, table: Table) -> None:
        self._clock = deadlines.TableClock(table)
        self._last_text = ""
        self._last: datetime | None = None
        self._last_version = 0
        self._started_version = 0

    def time_of(self, event: StoredEvent) -> datetime:
        """The event's commit time; Found if it is unreadable or before the event before it."""
        text = event.metadata.get("time")
        if text == self._last_text and self._last is not None:
            self._last_version = event.version
            return self._last
        try:
            at = datetime.fromisoformat(str(text))
        except ValueError:
            raise Found(event, f"its time {text!r} is not an ISO 8601 time") from None
        if at.tzinfo is None or at.utcoffset() is None:
            raise Found(event, f"its time {text!r} has no time zone")
        last = self._last
        if last is not None and at < last:
            raise Found(
                event,
                f"its time {at.isoformat()} is {_seconds(last - at)} before the time of "
                f"version {self._last_version} ({last.isoformat()}): time never goes backwards "
                "within a table's log",
            )
        self._last_text, self._last, self._last_version = str(text), at, event.version
        return at

    def check_timeout(self, event: StoredEvent, at: datetime) -> None:
        """A timeout stamped ``at`` comes no earlier than the running timer's deadline."""
        running = self._clock.deadline
        if running is None or self._clock.started_at is None:
            return  # no timer runs: the rules refuse the timeout, or it does nothing
        if at >= running.expires_at - TOLERANCE:
            return
        timer = _TIMER_WORDS.get(running.kind, running.kind)
        whose = f" of seat {running.seat}" if running.seat is not None else ""
        raise Found(
            event,
            f"a timeout {_seconds(at - self._clock.started_at)} after the {timer}{whose} "
            f"started at version {self._started_version}, but that timer runs "
            f"{_seconds(running.expires_at - self._clock.started_at)}: it cannot expire before "
            f"{running.expires_at.isoformat()}",
        )

    def follow(self, table: Table, version: int, at: datetime) -> None:
        """The table became ``table`` by the command whose events end at ``version``, at ``at``."""
        previous = self._clock.run
        self._clock = deadlines.clocked(table, self._clock, at)
        if self._clock.run is not None and self._clock.run != previous:
            self._started_version = version


def _seconds(delta: timedelta) -> str:
    return f"{delta.total_seconds():g} s"
