"""What a table does by itself when it waited too long: a table never stalls.

The timer service sends ``MoveOn`` for the game and round a table waited
after (:func:`president.hosting.deadlines.idle_timer` says when); the table
decides here, from its own state at that moment, what moving on means:

- no person is left at it: it closes (``TableClosed``);
- between rounds: the next round, or, in a game with no set end
  (``game_end`` ``unlimited``), the end of the game;
- after a game: back to the lobby;
- in rapid play, for a table whose bots wait a human-like delay
  (``bot_delay_ms``): the next bot's move, on the table version the delay
  was counted on.

Anything else (the host acted meanwhile, another round began) is STALE.
Pure: tables in, a command or an event out.
"""

from __future__ import annotations

from president.hosting.autoplay import next_bot_command
from president.hosting.events import TableClosed
from president.hosting.host_role import has_humans
from president.hosting.projection import Table
from president.rules import game as g
from president.rules import round as rnd
from president.rules.errors import ErrorCode, Rejected

#: The sentence of a table closed for want of people.
NOBODY_LEFT = "nobody was left at the table: it closed"


def nobody_left(table: Table) -> bool:
    """Whether every person left the table (bots may still sit there)."""
    return not table.closed and bool(table.departures) and not has_humans(table)


def move_on(
    table: Table, game_no: int, round_no: int, timer_key: int = 0
) -> g.GameCommand | rnd.Command | TableClosed:
    """What the table does by itself after waiting in ``game_no``, ``round_no`` (in rapid
    play, ``timer_key`` is the table version the bots waited on)."""
    game = table.game
    if table.closed:
        raise Rejected(ErrorCode.STALE, "the table is closed")
    if nobody_left(table):
        return TableClosed(NOBODY_LEFT)
    if (game.game_no, game.round_no) != (game_no, round_no):
        raise Rejected(ErrorCode.STALE, "the table moved on since")
    if game.phase == g.GamePhase.BETWEEN_ROUNDS:
        return g.EndGame() if game.options.game_end == "unlimited" else g.NextRound()
    if game.phase == g.GamePhase.GAME_OVER:
        return g.BackToLobby()
    if game.phase == g.GamePhase.ROUND and table.version == timer_key:
        bot = next_bot_command(game)
        if bot is not None:
            return bot[1]
    raise Rejected(ErrorCode.STALE, "the table is not waiting between rounds or after a game")
