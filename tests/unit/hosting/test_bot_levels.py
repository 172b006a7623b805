"""Hosted bots play at their seat's level; a strong bot's search ends on the wall clock."""

from __future__ import annotations

import dataclasses

from president.hosting.autoplay import BotBudget, bot_move, next_bot_command
from president.hosting.dealer import deal_round
from president.play.offline import play_game, round_secret
from president.rules import bots
from president.rules import game as g
from president.rules import round as rnd
from president.rules.levels import BASIC, STRONG, bot_player_id
from president.rules.options import options_for


class FakeClock:
    """A clock that moves 1/16 s on every reading (exact in binary), and counts its readings."""

    def __init__(self) -> None:
        self.now = 0.0
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        self.now += 0.0625
        return self.now


def _table_at_a_choice(levels: list[str], seed: int = 5) -> g.GameState:
    """A club table of four bots at these levels, in round 1, at a move with a real choice."""
    game = g.new_table(options_for("club"), 4)
    for seat, level in enumerate(levels):
        game, _ = g.step(game, g.SitDown(seat, bot_player_id(level, str(seat)), is_bot=True))
    game, _ = g.step(game, g.StartGame())
    game, _ = g.step(game, deal_round(game, round_secret(seed, game.game_no, 1)))
    for _ in range(200):
        state = game.round
        assert state is not None
        legal = rnd.legal_actions(state, state.to_act)
        if len(legal) > 2 and state.top:
            return game
        command = bots.choose_action(state, state.to_act)
        assert command is not None
        game, _ = g.step(game, command)
    raise AssertionError("no choice came up")  # pragma: no cover


def test_a_strong_bot_stops_searching_when_its_seconds_are_up() -> None:
    readings = []
    for seed in range(6):
        game = _table_at_a_choice([STRONG] * 4, seed)
        clock = FakeClock()
        budget = BotBudget(simulations=10**9, seconds=0.5, clock=clock)
        state = game.round
        assert state is not None
        move = bot_move(game, state.to_act, budget)
        assert move is not None
        rnd.decide(state, move)  # legal
        readings.append(clock.readings)
    # One reading sets the deadline, then one before each deal: at most 7 deals, the 8th
    # reading past the deadline; a search that settles sooner (nothing left in question)
    # reads less, but a search never reads past it.
    assert max(readings) == 1 + 8, readings
    assert min(readings) >= 2


def test_a_basic_bot_and_a_stand_in_never_search() -> None:
    game = _table_at_a_choice([BASIC] * 4)
    clock = FakeClock()
    budget = BotBudget(simulations=10**9, seconds=0.1, clock=clock)
    state = game.round
    assert state is not None
    assert bot_move(game, state.to_act, budget) == bots.choose_action(state, state.to_act)
    assert clock.readings == 0
    # A player who left (a stand-in plays basic), even with a strong bot's kind of id.
    seats = list(game.seats)
    seats[state.to_act] = g.Seat(player=bot_player_id(STRONG, "x"), is_bot=False, leaving=True)
    left = dataclasses.replace(game, seats=tuple(seats))
    assert next_bot_command(left, budget) == (
        state.to_act,
        bots.choose_action(state, state.to_act),
    )
    assert clock.readings == 0


def test_offline_games_with_strong_bots_are_reproducible_and_end() -> None:
    options = options_for("house")
    levels = [STRONG, BASIC, BASIC, BASIC]
    budget = BotBudget(simulations=30, seed=4)
    first, first_rounds = play_game(options, 4, seed=2, rounds=2, levels=levels, budget=budget)
    _, again_rounds = play_game(options, 4, seed=2, rounds=2, levels=levels, budget=budget)
    assert first.phase == g.GamePhase.GAME_OVER
    assert [r.events for r in first_rounds] == [r.events for r in again_rounds]
    assert first.seats[0].player == "bot:strong:0"
