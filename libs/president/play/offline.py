"""Bots play a whole game offline: the engine and the committed deal, no store, no servers.

Used by ``president play``, the golden replays and the benchmarks. Each
round's secret is derived from the seed, so a seeded game is reproducible,
and every deal can be checked against its fingerprint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from president.deal import fingerprint
from president.hosting.autoplay import BotBudget, bot_move, next_bot_command
from president.hosting.dealer import deal_round
from president.rules import game as g
from president.rules import round as rnd
from president.rules.levels import bot_player_id
from president.rules.options import Options

MAX_STEPS_PER_ROUND = 5_000
#: Offline strong bots search a fixed number of playouts, seeded: a game is reproducible.
OFFLINE_BUDGET = BotBudget(simulations=100, seed=0)


def round_secret(seed: int, game_no: int, round_no: int) -> bytes:
    """The 32-byte deal secret of a seeded local game's round."""
    return hashlib.sha256(f"president-local/{seed}/{game_no}/{round_no}".encode()).digest()


@dataclass
class RoundRecord:
    """A played round: its secret and fingerprint, and the events in order."""

    round_no: int
    secret: bytes
    fingerprint: str
    events: list[g.GameEvent] = field(default_factory=list)


Listener = Callable[[g.GameEvent, g.GameState], None]


def next_offline_command(
    game: g.GameState, rapid_turn: int, budget: BotBudget = OFFLINE_BUDGET
) -> rnd.Command | None:
    """What the bots do next in the round under way (None: nobody acts; the timer runs).

    The exchange and turn-based play: the table host's choice
    (:func:`president.hosting.autoplay.next_bot_command`; every seat here is a bot).
    Rapid play: the bots are asked round-robin from seat ``rapid_turn``, where
    the table host asks the lowest seat first; the golden logs of local games
    keep this order.
    """
    state = game.round
    assert state is not None
    if state.phase == rnd.RoundPhase.EXCHANGE or not state.options.rapid:
        move = next_bot_command(game, budget)
        return move[1] if move is not None else None
    seat_count = state.seat_count
    for offset in range(seat_count):
        seat = (rapid_turn + offset) % seat_count
        command = bot_move(game, seat, budget)
        if command is not None:
            return command
    return None


def play_game(
    options: Options,
    players: int,
    *,
    seed: int = 0,
    rounds: int | None = None,
    listener: Listener | None = None,
    levels: Sequence[str] | None = None,
    budget: BotBudget = OFFLINE_BUDGET,
) -> tuple[g.GameState, list[RoundRecord]]:
    """Seat ``players`` bots, play until the game ends (or ``rounds`` rounds), return the table.

    ``levels`` names each seat's bot level (:mod:`president.rules.levels`); without it every
    bot is ``basic``, named ``Bot 1``, ``Bot 2``, ... as the golden logs keep them.
    """
    game = g.new_table(options, players)
    records: list[RoundRecord] = []

    def apply(command: g.GameCommand | rnd.Command) -> None:
        nonlocal game
        game, events = g.step(game, command)
        for event in events:
            if records and game.phase != g.GamePhase.LOBBY:
                records[-1].events.append(event)
            if listener is not None:
                listener(event, game)

    for seat in range(players):
        name = f"Bot {seat + 1}"
        player = name if levels is None else bot_player_id(levels[seat], str(seat))
        apply(g.SitDown(seat, player, is_bot=True, display_name="" if levels is None else name))
    apply(g.StartGame())
    while game.phase != g.GamePhase.GAME_OVER:
        if game.phase == g.GamePhase.DEALING:
            secret = round_secret(seed, game.game_no, game.round_no + 1)
            records.append(RoundRecord(game.round_no + 1, secret, fingerprint(secret)))
            apply(deal_round(game, secret))
        elif game.phase == g.GamePhase.ROUND:
            _play_out(apply, lambda: game, budget)
        elif game.phase == g.GamePhase.BETWEEN_ROUNDS:
            if rounds is not None and game.round_no >= rounds:
                apply(g.EndGame())
            else:
                apply(g.NextRound())
        else:  # pragma: no cover - a bot table never goes back to the lobby
            break
    return game, records


def _play_out(
    apply: Callable[[g.GameCommand | rnd.Command], None],
    current: Callable[[], g.GameState],
    budget: BotBudget,
) -> None:
    turn = 0
    for _ in range(MAX_STEPS_PER_ROUND):
        table = current()
        if table.phase != g.GamePhase.ROUND:
            return
        command = next_offline_command(table, turn, budget)
        turn += 1
        apply(command if command is not None else rnd.Timeout())
    raise RuntimeError("a round did not end")  # pragma: no cover
