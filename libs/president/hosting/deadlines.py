"""The deadline rules: which timer runs at a table, for whom, and when it expires.

One source for the timer service, the views and the audit.

Pure: tables and event times in, deadlines out; no clock, no I/O. The
deadline of a table depends only on its events and their commit times, so a
timer that replays the stream after a restart computes the same deadlines.

- Turn-based play: the seat to act has ``turn_seconds`` from the event that
  gave it the turn (every accepted play or pass gives the turn anew).
- Rapid play: ``rapid_seconds`` from the last accepted play, trick close or
  the start of play. Passes do not restart it (they leave the trick version,
  the rapid timer key, unchanged); rejections, reactions and reconnections
  write no event at all.
- Exchange: ``turn_seconds`` from the start of the exchange, for every
  return still owed; the returns made meanwhile do not restart it.
- Nothing in the lobby, while dealing, between rounds or after a game.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from president.events.v1.events_pb2 import EventEnvelope
from president.hosting.events import TableCreated, TableEvent
from president.hosting.projection import Table, fold, table_from_created
from president.rules import game as g
from president.rules import round as rnd

TURN = "turn"
RAPID = "rapid"
EXCHANGE = "exchange"


@dataclass(frozen=True)
class Timer:
    """The timer a table's state calls for, without its start time."""

    kind: str
    seat: int | None
    timer_key: int
    game_no: int
    round_no: int
    seconds: int

    @property
    def run(self) -> tuple[object, ...]:
        """What identifies one run of the timer: a change restarts the clock.

        The exchange's timer key moves with each return, but its clock does
        not: one deadline for the whole exchange.
        """
        key = None if self.kind == EXCHANGE else self.timer_key
        return (self.kind, self.game_no, self.round_no, self.seat, key)


@dataclass(frozen=True)
class Deadline:
    """A running deadline: the Timeout to send at ``expires_at``."""

    table_id: str
    kind: str
    seat: int | None
    timer_key: int
    game_no: int
    round_no: int
    expires_at: datetime

    @property
    def key(self) -> tuple[str, int, int, int, str]:
        """What the table's Timeout is asked to act on: one Timeout per key."""
        return (self.table_id, self.game_no, self.round_no, self.timer_key, self.kind)


def running_timer(table: Table) -> Timer | None:
    """The timer that runs at ``table`` now, if any."""
    game = table.game
    state = game.round
    if game.phase != g.GamePhase.ROUND or state is None:
        return None
    options = state.options
    if state.phase == rnd.RoundPhase.EXCHANGE:
        if not state.pending:
            return None
        return Timer(
            EXCHANGE, None, state.timer_key, game.game_no, state.round_no, options.turn_seconds
        )
    if state.phase != rnd.RoundPhase.PLAY:
        return None
    if options.rapid:
        return Timer(
            RAPID, None, state.timer_key, game.game_no, state.round_no, options.rapid_seconds
        )
    if state.to_act < 0:
        return None
    return Timer(
        TURN, state.to_act, state.timer_key, game.game_no, state.round_no, options.turn_seconds
    )


def deadline(table: Table, started_at: datetime) -> Deadline | None:
    """The table's deadline, its timer having started at ``started_at`` (an event's time)."""
    timer = running_timer(table)
    if timer is None:
        return None
    return Deadline(
        table_id=table.table_id,
        kind=timer.kind,
        seat=timer.seat,
        timer_key=timer.timer_key,
        game_no=timer.game_no,
        round_no=timer.round_no,
        expires_at=started_at + timedelta(seconds=timer.seconds),
    )


@dataclass(frozen=True)
class TableClock:
    """A table as the timer follows it: its state and when its running timer started."""

    table: Table
    started_at: datetime | None = None
    run: tuple[object, ...] | None = None

    @property
    def version(self) -> int:
        return self.table.version

    @property
    def deadline(self) -> Deadline | None:
        if self.started_at is None:
            return None
        return deadline(self.table, self.started_at)


def start_clock(created: TableCreated) -> TableClock:
    """The clock of a new table (no timer runs in the lobby)."""
    return TableClock(table_from_created(created))


def advance(clock: TableClock, event: TableEvent, version: int, at: datetime) -> TableClock:
    """The clock after one more event, committed at ``at``.

    The timer restarts at ``at`` when the event changed which timer runs
    (another kind, seat, round, or timer key); otherwise it keeps its start.
    """
    return clocked(fold(clock.table, event, version), clock, at)


def clocked(table: Table, previous: TableClock | None, at: datetime) -> TableClock:
    """The clock of ``table``, the table of ``previous`` after one more event committed at
    ``at`` (None: no clock before, as for the first event).

    The one rule of :func:`advance`, for a follower that folds the table itself
    (the gateway's feed, the audit): the timer keeps its start unless the event changed
    which timer runs.
    """
    timer = running_timer(table)
    if timer is None:
        return TableClock(table)
    if previous is not None and timer.run == previous.run and previous.started_at is not None:
        return TableClock(table, previous.started_at, previous.run)
    return TableClock(table, at, timer.run)


def event_time(envelope: EventEnvelope, fallback: datetime) -> datetime:
    """The commit time an envelope carries (``fallback`` when it has none)."""
    try:
        at = datetime.fromisoformat(envelope.time)
    except ValueError:
        return fallback
    return at if at.tzinfo is not None else at.replace(tzinfo=fallback.tzinfo)
