"""The deadline rules: which timer runs at a table, for whom, and when it expires.

One source for the timer service, the views and the audit.

Pure: tables and event times in, deadlines out; no clock, no I/O. The
deadline of a table depends only on its events and their commit times, so a
timer that replays the stream after a restart computes the same deadlines.

- Turn-based play: the seat to act has ``turn_seconds`` from the event that
  gave it the turn (every accepted play or pass gives the turn anew).
- Takeover (``takeover_seconds`` set, turn-based play): a person's seat to act
  that no gateway reports connected (:mod:`president.hosting.presence`) has
  ``takeover_seconds`` instead, from the same start, a ``takeover`` deadline
  whose Timeout makes the server play for the seat as at the turn timer's end
  (rulebook 000: the server may take over before the timer expires). The turn
  and its takeover are one run of the clock: a seat that disconnects mid-turn
  is taken over ``takeover_seconds`` after its turn began (at once if that is
  past), and one that reconnects has its turn timer again, from the same start.
- Rapid play: ``rapid_seconds`` from the last accepted play, trick close or
  the start of play. Passes do not restart it (they leave the trick version,
  the rapid timer key, unchanged); neither do reactions, chat and presence
  changes, whose events leave the trick version as it was, nor rejections,
  which write no event.
- Exchange: ``turn_seconds`` from the start of the exchange, for every
  return still owed; the returns made meanwhile do not restart it.
- Nothing for a seat in the lobby, while dealing, between rounds or after a game.
- Waiting for the server (:func:`waits_for_server`: a deal not yet made, an
  ended round's secret not yet revealed, a bot's move not yet made):
  ``SERVER_STEP_SECONDS`` from the event that left the table so, a ``server``
  deadline (keyed by that version) whose Timeout makes the table try the step
  again (a dealer or database outage ends with the table moving by itself).

Between rounds and after a game a timer runs only with :class:`IdleRules`
(the timer service's). A table never stalls (:func:`idle_timer`, the kinds
``between_rounds`` and ``closing``): between rounds the host has ``host_idle_seconds`` (a practice
table's ``advance_seconds`` when set) before the table moves on by itself,
and after a game the same before it goes back to the lobby; a table every
person left closes ``empty_seconds`` after the last one went. A host that no
gateway reports connected while another person is (in the lobby, between
rounds, after a game) has ``host_away_seconds`` (kind ``host_away``, keyed by
the host's seat) before the role passes to the next connected person, unless
the table moves on by itself sooner (then it does, as with the host there). The table's
``MoveOn`` command (:mod:`president.hosting.move_on`) decides what moving on
means.

In rapid play the table's bots wait a human-like delay (``bot_delay_ms``)
counted, like the rapid timer, from the last accepted play: the ``bots``
deadline comes before the rapid one while a bot has a move, keyed by the
table version so each bot move is a deadline of its own. In turn play a table
may pace its bots the same way (``bot_pace_ms``, counted from the start of the
bot's turn) so a person can follow the game.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from president.events.v1.events_pb2 import EventEnvelope
from president.hosting.autoplay import next_bot_command
from president.hosting.events import TableCreated, TableEvent
from president.hosting.host_role import away_successor, host_seat
from president.hosting.move_on import (
    AFTER_GAME_KEY,
    BETWEEN_ROUNDS,
    BETWEEN_ROUNDS_KEY,
    BOTS,
    CLOSING,
    HOST_AWAY,
    nobody_left,
)
from president.hosting.presence import connected_seats
from president.hosting.projection import Table, fold, table_from_created
from president.rules import game as g
from president.rules import round as rnd
from president.rules.options import Options

TURN = "turn"
TAKEOVER = "takeover"
RAPID = "rapid"
EXCHANGE = "exchange"
#: The kinds a table's ``MoveOn`` answers (the others, its ``Timeout``).
MOVE_ON_KINDS = frozenset({BETWEEN_ROUNDS, CLOSING, BOTS, HOST_AWAY})


@dataclass(frozen=True)
class IdleRules:
    """How long a table waits for people before it moves on by itself."""

    #: Between rounds and after a game: the host's time to choose.
    host_idle_seconds: int = 120
    #: After the last person left: the grace before the table closes.
    empty_seconds: int = 60
    #: A host no gateway reports connected, while another person is: the time before the
    #: role passes on (0: never; only a host who leaves passes it on).
    host_away_seconds: int = 0


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
        kind = TURN if self.kind == TAKEOVER else self.kind  # one turn, one clock
        return (kind, self.game_no, self.round_no, self.seat, key)


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
    if options.takeover_seconds and _away(table, state.to_act):
        return Timer(
            TAKEOVER,
            state.to_act,
            state.timer_key,
            game.game_no,
            state.round_no,
            options.takeover_seconds,
        )
    return Timer(
        TURN, state.to_act, state.timer_key, game.game_no, state.round_no, options.turn_seconds
    )


def _away(table: Table, seat: int) -> bool:
    """A person sits at ``seat`` and no gateway reports them connected."""
    occupant = table.game.seats[seat]
    return occupant.occupied and not occupant.is_bot and seat not in connected_seats(table.presence)


def idle_timer(table: Table, rules: IdleRules) -> Timer | None:
    """The timer of a table waiting for people: closing, between rounds, after a game."""
    game = table.game
    if table.closed:
        return None
    if nobody_left(table):
        return Timer(CLOSING, None, 0, game.game_no, game.round_no, rules.empty_seconds)
    hosts_wait = _hosts_wait(game, rules)
    waiting_phase = game.phase != g.GamePhase.ROUND  # a round has its own timers
    if (
        rules.host_away_seconds
        and waiting_phase
        and (hosts_wait is None or rules.host_away_seconds < hosts_wait.seconds)
        and away_successor(table) is not None
    ):
        # A host who is not there cannot choose: the role passes on first, unless the
        # table moves on by itself sooner. Keyed by the host's seat, so a new host who
        # goes away is a new wait.
        seat = host_seat(table)
        assert seat is not None
        return Timer(HOST_AWAY, None, seat, game.game_no, game.round_no, rules.host_away_seconds)
    return hosts_wait


def _hosts_wait(game: g.GameState, rules: IdleRules) -> Timer | None:
    """The host's time to choose: between rounds, and after a game (a clock of its own,
    not the last round's)."""
    if game.phase == g.GamePhase.BETWEEN_ROUNDS:
        seconds = game.options.advance_seconds or rules.host_idle_seconds
        return Timer(BETWEEN_ROUNDS, None, BETWEEN_ROUNDS_KEY, game.game_no, game.round_no, seconds)
    if game.phase == g.GamePhase.GAME_OVER:
        return Timer(
            BETWEEN_ROUNDS,
            None,
            AFTER_GAME_KEY,
            game.game_no,
            game.round_no,
            rules.host_idle_seconds,
        )
    return None


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
        # Bots that wait on purpose (rapid play; turn play with a pace): the ``bots``
        # deadline moves them.
        or (not game.options.rapid and not bots_wait(game) and next_bot_command(game) is not None)
    )


def server_timer(table: Table) -> Timer | None:
    """The ``server`` timer of a table that waits for the server, else None."""
    if not waits_for_server(table):
        return None
    game = table.game
    return Timer(SERVER, None, table.version, game.game_no, game.round_no, SERVER_STEP_SECONDS)


def table_timer(table: Table, idle: IdleRules | None = None) -> Timer | None:
    """The timer that runs at ``table`` now: the server's when it owes a step (before a
    bot's own turn timer), else the waiting ones when ``idle`` is given, else a seat's."""
    owed = server_timer(table)
    if owed is not None:
        return owed
    if idle is not None:
        waiting = idle_timer(table, idle)
        if waiting is not None and (waiting.kind == CLOSING or running_timer(table) is None):
            return waiting
    return running_timer(table)


def deadline(table: Table, started_at: datetime, idle: IdleRules | None = None) -> Deadline | None:
    """The table's deadline, its timer having started at ``started_at`` (an event's time)."""
    timer = table_timer(table, idle)
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
    #: The waiting rules the clock also follows (None: the turn timers only).
    idle: IdleRules | None = None

    @property
    def version(self) -> int:
        return self.table.version

    @property
    def deadline(self) -> Deadline | None:
        if self.started_at is None:
            return None
        due = deadline(self.table, self.started_at, self.idle)
        if due is not None and due.kind in (RAPID, TURN) and self.idle is not None:
            return bots_deadline(self.table, self.started_at) or due
        return due


def bot_delay(options: Options) -> int:
    """How long the table's bots wait before they move, in milliseconds (0: at once): in
    rapid play ``bot_delay_ms``, in turn play ``bot_pace_ms`` (a person can follow)."""
    return options.bot_delay_ms if options.rapid else options.bot_pace_ms


def bots_wait(game: g.GameState) -> bool:
    """Whether the table's bots wait on purpose before they move (the ``bots`` deadline)."""
    return bot_delay(game.options) > 0


def bots_deadline(table: Table, started_at: datetime) -> Deadline | None:
    """When the table's bots move: ``bot_delay_ms`` after the rapid timer started (the last
    accepted play), or in turn play ``bot_pace_ms`` after the bot's turn began, while a bot
    has a move (None: no bot waits)."""
    game = table.game
    delay = bot_delay(game.options)
    if not delay or game.round is None or next_bot_command(game) is None:
        return None
    return Deadline(
        table_id=table.table_id,
        kind=BOTS,
        seat=None,
        timer_key=table.version,
        game_no=game.game_no,
        round_no=game.round_no,
        expires_at=started_at + timedelta(milliseconds=delay),
    )


def start_clock(created: TableCreated, idle: IdleRules | None = None) -> TableClock:
    """The clock of a new table (no timer runs in the lobby)."""
    return TableClock(table_from_created(created), idle=idle)


def advance(clock: TableClock, event: TableEvent, version: int, at: datetime) -> TableClock:
    """The clock after one more event, committed at ``at``.

    The timer restarts at ``at`` when the event changed which timer runs
    (another kind, seat, round, or timer key); otherwise it keeps its start.
    """
    return clocked(fold(clock.table, event, version), clock, at)


def clocked(
    table: Table, previous: TableClock | None, at: datetime, idle: IdleRules | None = None
) -> TableClock:
    """The clock of ``table``, the table of ``previous`` after one more event committed at
    ``at`` (None: no clock before, as for the first event, whose clock follows ``idle``).

    The one rule of :func:`advance`, for a follower that folds the table itself
    (the gateway's feed, the audit): the timer keeps its start unless the event changed
    which timer runs.
    """
    idle = previous.idle if previous is not None else idle
    timer = table_timer(table, idle)
    if timer is None:
        return TableClock(table, idle=idle)
    if previous is not None and timer.run == previous.run and previous.started_at is not None:
        return TableClock(table, previous.started_at, previous.run, idle)
    return TableClock(table, at, timer.run, idle)


def event_time(envelope: EventEnvelope, fallback: datetime) -> datetime:
    """The commit time an envelope carries (``fallback`` when it has none)."""
    try:
        at = datetime.fromisoformat(envelope.time)
    except ValueError:
        return fallback
    return at if at.tzinfo is not None else at.replace(tzinfo=fallback.tzinfo)
