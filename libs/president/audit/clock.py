"""The log's times: they never go backwards, and no timeout comes before its deadline.

Each stored event's metadata ``time`` is its commit time. Within a stream the
times never go backwards. A ``Timeout`` command is the timer's: it may come
only once the deadline the timer service would have set has passed (turn,
takeover, rapid and exchange timers, from the options and the event times), which
:mod:`president.hosting.deadlines` computes, the one source of those rules.
``TOLERANCE`` allows for the timer's and the table's clocks differing a little.
:class:`TimeCheck` raises :class:`~president.audit.reports.Found` at the first
event that breaks one.

The timer's start is found when a timeout needs it, not kept up to date
command by command (most commands of a log are no timeout): the walk notes
each command's table and time, and :meth:`TimeCheck.check_timeout` looks back
over them for the first command of the running timer's run, as
:func:`president.hosting.deadlines.clocked` would have started it (the clock
keeps its start while :func:`president.hosting.deadlines.table_timer` gives the
same run). It looks no further back than the timer lasts: a start before that
is early enough for any timeout, so only that much of the log is kept.
"""

from __future__ import annotations

from collections import deque
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
    """The times of one table's log as the walk meets them, and the commands a timer may
    have started at."""

    def __init__(self, table: Table) -> None:
        self._last_text = ""
        self._last: datetime | None = None
        self._last_version = 0
        self._followed: deque[tuple[Table, int, datetime]] = deque([(table, 0, _NEVER)])
        self._horizon = _longest_timer(table)

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
        followed = self._followed
        table = followed[-1][0]
        running = deadlines.table_timer(table)
        if running is None:
            return  # no timer runs: the rules refuse the timeout, or it does nothing
        duration = timedelta(seconds=running.seconds)
        early_enough = at - duration + TOLERANCE  # a start at or before this is no finding
        run = running.run
        started_at: datetime | None = None
        started_version = 0
        for earlier, version, then in reversed(followed):
            if then is _NEVER:
                break
            timer = deadlines.table_timer(earlier) if earlier is not table else running
            if timer is None or timer.run != run:
                break
            started_at, started_version = then, version
            if then <= early_enough:
                return
        if started_at is None or at >= started_at + duration - TOLERANCE:
            return
        timer_words = _TIMER_WORDS.get(running.kind, running.kind)
        whose = f" of seat {running.seat}" if running.seat is not None else ""
        raise Found(
            event,
            f"a timeout {_seconds(at - started_at)} after the {timer_words}{whose} "
            f"started at version {started_version}, but that timer runs "
            f"{_seconds(duration)}: it cannot expire before "
            f"{(started_at + duration).isoformat()}",
        )

    def follow(self, table: Table, version: int, at: datetime) -> None:
        """The table became ``table`` by the command whose events end at ``version``, at ``at``."""
        followed = self._followed
        followed.append((table, version, at))
        horizon = at - self._horizon
        while len(followed) > 2 and followed[1][2] < horizon:
            followed.popleft()


_NEVER = datetime.min
"""The time of the table's creation in the followed commands: no timer runs in the lobby."""


def _longest_timer(table: Table) -> timedelta:
    """Longer than any timer of the table runs (its options', and the server's step)."""
    options = table.game.options
    longest = max(
        options.turn_seconds,
        options.rapid_seconds,
        options.takeover_seconds,
        deadlines.SERVER_STEP_SECONDS,
    )
    return timedelta(seconds=longest) + 2 * TOLERANCE


def _seconds(delta: timedelta) -> str:
    return f"{delta.total_seconds():g} s"
