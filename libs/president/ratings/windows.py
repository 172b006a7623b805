"""Leaderboard windows: this week, this month, all time, and when each resets.

Weeks are UTC weeks starting Monday 00:00; months are calendar months in
UTC. A round's points count in the windows that hold the time its round
ended (a time from the event, so a replay puts them where they were), and a
leaderboard shows the window that holds the moment asked about (now, from
an injectable clock, unless a request names another moment).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

WEEK = "week"
MONTH = "month"
ALL_TIME = "all"
WINDOWS = (WEEK, MONTH, ALL_TIME)


class UnknownWindow(ValueError):
    """A window that is not one of :data:`WINDOWS`."""


@dataclass(frozen=True)
class Period:
    """One window's span: its key, and when it starts and ends (``None``: never)."""

    window: str
    key: str
    starts: datetime | None
    ends: datetime | None


def check_window(window: str) -> str:
    """``window`` if it is one of :data:`WINDOWS`; :class:`UnknownWindow` if not."""
    if window not in WINDOWS:
        raise UnknownWindow(f"there is no window {window!r}: choose {', '.join(WINDOWS)}")
    return window


def period(window: str, when: datetime) -> Period:
    """The period of ``window`` that holds ``when`` (an aware time)."""
    at = when.astimezone(UTC)
    if check_window(window) == WEEK:
        monday = datetime(at.year, at.month, at.day, tzinfo=UTC) - timedelta(days=at.weekday())
        return Period(WEEK, f"week:{monday.date().isoformat()}", monday, monday + timedelta(7))
    if window == MONTH:
        first = datetime(at.year, at.month, 1, tzinfo=UTC)
        after = datetime(at.year + at.month // 12, at.month % 12 + 1, 1, tzinfo=UTC)
        return Period(MONTH, f"month:{first:%Y-%m}", first, after)
    return Period(ALL_TIME, ALL_TIME, None, None)


def periods(when: datetime) -> list[Period]:
    """The period of every window that holds ``when``: where a round's points go."""
    return [period(window, when) for window in WINDOWS]
