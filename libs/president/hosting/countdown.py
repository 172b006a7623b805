"""The countdown part of a view: the running timer's deadline and the server's now.

The deadline is the one the timer service acts on: the same rules
(:func:`president.hosting.deadlines.running_timer`) and the same start, the
commit time of the event that started the running timer, which a follower
tracks with :func:`president.hosting.deadlines.clocked`. The part holds no
card and no secret: everyone at the table sees the same countdown. Its seat is
the seat whose turn the deadline ends or, for a ``host_away`` wait, the away
host's (the wait is keyed by that seat), so a page can say who is away.
"""

from __future__ import annotations

from datetime import datetime

from president.game.v1 import game_pb2 as gpb
from president.hosting.deadlines import Deadline, TableClock, deadline
from president.hosting.move_on import BOTS, HOST_AWAY


def shown_deadline(clock: TableClock) -> Deadline | None:
    """The deadline a view shows: the timer's, except that in rapid play the bots' wait
    before their move gives way to the shared rapid timer the people race against (in
    turn play a paced bot's wait is the turn's only timer: it is shown, kind ``bots``)."""
    due = clock.deadline
    if due is not None and due.kind == BOTS and clock.table.game.options.rapid:
        assert clock.started_at is not None  # a deadline runs from its start
        return deadline(clock.table, clock.started_at, clock.idle)
    return due


def unix_ms(at: datetime) -> int:
    """Milliseconds since the Unix epoch."""
    return round(at.timestamp() * 1000)


def countdown(clock: TableClock | None, now: datetime) -> gpb.TableView:
    """The view's timing fields only (merged into a view): the deadline of ``clock``'s
    running timer, for whom (a turn's seat; an away host's) and of which kind, and ``now``
    as the server's clock."""
    view = gpb.TableView(server_now_unix_ms=unix_ms(now))
    due = shown_deadline(clock) if clock is not None else None
    if due is not None:
        view.deadline_unix_ms = unix_ms(due.expires_at)
        view.deadline_kind = due.kind
        if due.seat is not None:
            view.deadline_seat = due.seat
        elif due.kind == HOST_AWAY:
            view.deadline_seat = due.timer_key  # the host's seat: the wait is keyed by it
    return view
