"""The move a bot (or a stand-in for a player who left) makes next at a hosted table.

Each bot plays at the level its player id names
(:func:`president.rules.levels.level_of`); a stand-in for a player who left
plays ``basic``. The ``strong`` bot's search is bounded here, outside the
pure rules: by a number of playouts and, at a hosted table, by the wall clock
(:data:`HOSTED`), so it never holds a table up.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from president.rules import bots
from president.rules import game as g
from president.rules import round as rnd
from president.rules.information import information_set
from president.rules.levels import BASIC, STRONG, bot_account, level_of
from president.rules.search import Budget, choose_strong

#: A strong bot's thinking time per move at a hosted table: well under the
#: turn timer (the least is 1 s) and a rapid round's bot reaction delay.
STRONG_MOVE_SECONDS = 0.1


@dataclass(frozen=True, slots=True)
class BotBudget:
    """How far a strong bot searches: at most ``simulations`` playouts and, unless None,
    ``seconds`` of wall clock (read from ``clock``). ``seed`` None: fresh randomness for
    every move; a number: the same moves every run (offline games, benchmarks)."""

    simulations: int
    seconds: float | None = None
    seed: int | None = None
    clock: Callable[[], float] = time.monotonic


#: The hosted tables' budget: the clock ends the search; the playouts only cap it.
HOSTED = BotBudget(simulations=5_000, seconds=STRONG_MOVE_SECONDS)


def bot_move(game: g.GameState, seat: int, budget: BotBudget = HOSTED) -> rnd.Command | None:
    """What the bot playing ``seat`` does now, at its level (None: nothing to do now)."""
    state = game.round
    assert state is not None
    occupant = game.seats[seat]
    if not occupant.is_bot or level_of(occupant.player or "") != STRONG:
        return bots.choose_action(state, seat)
    if budget.seed is None:
        rng = random.Random()
    else:
        rng = random.Random(f"{budget.seed}/{game.game_no}/{state.round_no}/{state.moves}/{seat}")
    stop = None if budget.seconds is None else _deadline(budget.clock, budget.seconds)
    return choose_strong(information_set(state, seat), rng, Budget(budget.simulations, stop))


def _deadline(clock: Callable[[], float], seconds: float) -> Callable[[], bool]:
    """A search's ``stop``: True once ``seconds`` have passed on ``clock`` from now."""
    deadline = clock() + seconds

    def passed() -> bool:
        return clock() >= deadline

    return passed


def has_searching_bot(game: g.GameState) -> bool:
    """A bot at this table searches before it moves (a strong bot): its moves take up to
    :data:`STRONG_MOVE_SECONDS` each, where a basic bot's take microseconds."""
    return any(seat.is_bot and level_of(seat.player or "") == STRONG for seat in game.seats)


def next_bot_command(
    game: g.GameState, budget: BotBudget = HOSTED
) -> tuple[int, rnd.Command] | None:
    """The next move a bot (or a stand-in for a player who left) makes, if any, and its seat.

    In the exchange the first bot that owes cards returns them; in turn-based
    play the bot whose turn it is moves; in rapid play the lowest bot seat
    that has a move makes it.
    """
    state = game.round
    if game.phase != g.GamePhase.ROUND or state is None:
        return None
    bot_seats = g.bot_seats(game)
    if not bot_seats:
        return None
    if state.phase == rnd.RoundPhase.EXCHANGE:
        for owed in state.pending:
            if owed.giver in bot_seats:
                cards = bots.choose_return(state, owed.giver, owed.size)
                return owed.giver, rnd.ReturnCards(owed.giver, cards)
        return None
    if not state.options.rapid:
        if state.to_act in bot_seats:
            command = bot_move(game, state.to_act, budget)
            return (state.to_act, command) if command is not None else None
        return None
    for seat in bot_seats:
        command = bot_move(game, seat, budget)
        if command is not None:
            return seat, command
    return None


def bot_actor(game: g.GameState, seat: int) -> str:
    """The account a bot's move at ``seat`` is recorded as: its level's (``bot:basic``,
    ``bot:strong``; :func:`president.rules.levels.bot_account`), the basic bot's when it
    stands in for a player who left."""
    occupant = game.seats[seat]
    if occupant.is_bot and occupant.player:
        return bot_account(level_of(occupant.player))
    return bot_account(BASIC)
