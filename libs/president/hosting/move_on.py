"""What a table does by itself when it waited too long: a table never stalls.

The timer service sends ``MoveOn`` for the game and round a table waited
after (:func:`president.hosting.deadlines.idle_timer` says when); the table
decides here, from its own state at that moment, what moving on means:

- no person is left at it: it closes (``TableClosed``);
- between rounds: the next round, or, in a game with no set end
  (``game_end`` ``unlimited``), the end of the game;
- after a game: back to the lobby;
- a host who stayed away (no gateway reports them connected) while another
  person is connected: the host role passes to the next connected person
  (``HostChanged``, automatic);
- in rapid play, for a table whose bots wait a human-like delay
  (``bot_delay_ms``): the next bot's move, on the table version the delay
  was counted on.

Anything else (the host acted meanwhile, another round began) is STALE.
Pure: tables in, a command or an event out.
"""

from __future__ import annotations

from president.hosting.autoplay import next_bot_command
from president.hosting.events import HostChanged, TableClosed
from president.hosting.host_role import away_successor, has_humans, host_seat
from president.hosting.projection import Table
from president.rules import game as g
from president.rules import round as rnd
from president.rules.errors import ErrorCode, Rejected

#: The sentence of a table closed for want of people.
NOBODY_LEFT = "nobody was left at the table: it closed"
#: What a table waited for (the kinds of the timer's waiting deadlines): the host between
#: rounds (timer key 0) or after a game (timer key 1), people at an empty table, its bots.
BETWEEN_ROUNDS = "between_rounds"
CLOSING = "closing"
BOTS = "bots"
HOST_AWAY = "host_away"
#: The timer keys of the host's wait: between rounds, after a game.
BETWEEN_ROUNDS_KEY, AFTER_GAME_KEY = 0, 1


def nobody_left(table: Table) -> bool:
    """Whether every person left the table (bots may still sit there)."""
    return not table.closed and bool(table.departures) and not has_humans(table)


def move_on(
    table: Table, kind: str, game_no: int, round_no: int, timer_key: int = 0
) -> g.GameCommand | rnd.Command | TableClosed | HostChanged:
    """What the table does by itself after waiting (``kind``) in ``game_no``, ``round_no``;
    ``timer_key`` is the wait's (for the bots, the table version they waited on). STALE
    when the table no longer waits so."""
    game = table.game
    if table.closed:
        raise Rejected(ErrorCode.STALE, "the table is closed")
    if kind == CLOSING and nobody_left(table):
        return TableClosed(NOBODY_LEFT)
    if (
        kind == HOST_AWAY
        and (game.game_no, game.round_no) == (game_no, round_no)
        and game.phase != g.GamePhase.ROUND
        and host_seat(table) == timer_key
    ):
        change = away_successor(table)
        if change is not None:
            return change
    if kind != CLOSING and (game.game_no, game.round_no) == (game_no, round_no):
        phase = game.phase
        if kind == BETWEEN_ROUNDS and timer_key == BETWEEN_ROUNDS_KEY:
            if phase == g.GamePhase.BETWEEN_ROUNDS:
                return g.EndGame() if game.options.game_end == "unlimited" else g.NextRound()
        elif kind == BETWEEN_ROUNDS and timer_key == AFTER_GAME_KEY:
            if phase == g.GamePhase.GAME_OVER:
                return g.BackToLobby()
        elif kind == BOTS and phase == g.GamePhase.ROUND and table.version == timer_key:
            bot = next_bot_command(game)
            if bot is not None:
                return bot[1]
    raise Rejected(ErrorCode.STALE, f"the table no longer waits ({kind}): it moved on since")
