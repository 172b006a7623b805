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
- Nothing for a seat in the lobby, while dealing, between rounds or after a game.
- Waiting for the server (:func:`waits_for_server`: a deal not yet made, an
  ended round's secret not yet revealed, a bot's move not yet made):
  ``SERVER_STEP_SECONDS`` from the event that left the table so, a ``server``
  deadline (keyed by that version) whose Timeout makes the table try the step
  again (a dealer or database outage ends with the table moving by itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from president.hosting.autoplay import next_bot_command
from president.hosting.events import TableCreated, TableEvent
from president.hosting.projection import Table, fold, table_from_created
from president.rules import game as g
from president.rules import round as rnd

TURN = "turn"
RAPID = "rapid"
EXCHANGE = "exchange"
SERVER = "server"
#: How long a table may wait for a step the server owes before the timer asks again.
SERVER_STEP_SECONDS = 3


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


def needs_reveal(table: Table) -> bool:
    """The table's last round is over and its deal's secret is not stored yet."""
    state = table.game.round
    return (
        table.commitment is not None
        and state is not None
        and state.phase == rnd.RoundPhase.OVER
        and state.round_no == table.commitment.round_no
    )


def waits_for_server(table: Table) -> bool:
    """The table waits for a step the server owes: a deal, an ended round's reveal, or a
    bot's move (a settled table never has one: a command's follow-ups make them)."""
    game = table.game
    return (
        game.phase == g.GamePhase.DEALING
        or needs_reveal(table)
        or next_bot_command(game) is not None
    )


def server_timer(table: Table) -> Timer | None:
    """The ``server`` timer of a table that waits for the server, else None."""
    if not waits_for_server(table):
        return None
    game = table.game
    return Timer(SERVER, None, table.version, game.game_no, game.round_no, SERVER_STEP_SECONDS)


def table_timer(table: Table) -> Timer | None:
    """The timer the timer service keeps for ``table``: the server's when it owes a step
    (before a bot's own turn timer), else a seat's."""
    return server_timer(table) or running_timer(table)


def deadline(table: Table, started_at: datetime) -> Deadline | None:
    """The table's deadline, its timer having started at ``started_at`` (an event's time)."""
    timer = table_timer(table)
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
    table = fold(clock.table, event, version)
    timer = table_timer(table)
    if timer is None:
        return TableClock(table)
    if timer.run == clock.run and clock.started_at is not None:
        return TableClock(table, clock.started_at, clock.run)
    return TableClock(table, at, timer.run)
