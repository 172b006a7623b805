"""The strong bot against three basic bots, per preset: prints numbers, asserts nothing.

Offline games (:mod:`president.play.offline`); the strong bot's seat turns
with each game so no seat is favoured. For every round: the strong bot's
place. Printed per preset: the share of rounds it finishes in the top half
(places 1 and 2 of 4; a basic bot's share is 50%) with its 95% Wilson
interval, and its average place with a 95% interval. Rounds of one game are
not independent (the exchange carries a place into the next round), so the
intervals are a little narrower than the truth.

The strong bot searches a fixed number of playouts per move here (seeded:
a run is reproducible); at hosted tables the clock bounds it
(:data:`president.hosting.autoplay.HOSTED`). The last line says how many
playouts fit in that time on this machine.

Run: ``make bench``, or ``.venv/bin/python tests/benchmarks/bots_bench.py``
(``--long`` for five times the games).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import platform
import random
import time

from president.deal import deal
from president.hosting.autoplay import HOSTED, BotBudget
from president.play.offline import play_game
from president.rules import bots
from president.rules import round as rnd
from president.rules.cards import to_mask
from president.rules.information import information_set
from president.rules.levels import BASIC, STRONG
from president.rules.options import PRESETS, options_for
from president.rules.search import Budget, candidate_moves, choose_strong

Z95 = 1.959964


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion."""
    if trials == 0:
        return 0.0, 1.0
    share = successes / trials
    denominator = 1 + z * z / trials
    centre = (share + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials)) / denominator
    return centre - half, centre + half


def strong_places(
    preset: str, players: int, games: int, rounds: int, simulations: int
) -> list[int]:
    """The strong bot's place (0 = first) in every round of ``games`` games."""
    options = options_for(preset)
    places: list[int] = []
    for game_index in range(games):
        strong_seat = game_index % players
        levels = [STRONG if seat == strong_seat else BASIC for seat in range(players)]
        budget = BotBudget(simulations=simulations, seed=game_index)
        _, records = play_game(
            options, players, seed=game_index, rounds=rounds, levels=levels, budget=budget
        )
        for record in records:
            for event in record.events:
                if isinstance(event, rnd.RoundEnded):
                    places.append(event.standings.index(strong_seat))
    return places


class _CountingDeadline:
    """A search's ``stop`` at ``deadline`` (perf_counter), counting how often it is asked."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return time.perf_counter() >= self.deadline


def playouts_in(seconds: float, positions: int = 20) -> float:
    """How many playouts the strong bot makes in ``seconds`` (club, four players, round 1,
    its second move)."""
    options = options_for("club")
    made: list[int] = []
    rng = random.Random(0)
    for index in range(positions):
        secret = hashlib.sha256(f"bots-bench/{index}".encode()).digest()
        state, _ = rnd.start_round(options, [to_mask(h) for h in deal(secret, range(4)).hands])
        state, _ = rnd.step(state, bots.choose_action(state, state.to_act) or rnd.Timeout())
        seat = state.to_act
        basic = bots.choose_action(state, seat)
        if basic is None:
            continue
        per_deal = len(candidate_moves(state, seat, basic))
        stop = _CountingDeadline(time.perf_counter() + seconds)
        choose_strong(information_set(state, seat), rng, Budget(simulations=10**9, stop=stop))
        made.append((stop.asked - 1) * per_deal)
    return sum(made) / max(len(made), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10, help="games per preset (default 10)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per game (default 6)")
    parser.add_argument("--players", type=int, default=4, help="seats (default 4)")
    parser.add_argument(
        "--simulations", type=int, default=100, help="playouts per strong move (default 100)"
    )
    parser.add_argument("--long", action="store_true", help="five times the games")
    parser.add_argument("--presets", nargs="*", default=list(PRESETS), choices=PRESETS)
    args = parser.parse_args()
    games = args.games * (5 if args.long else 1)
    players = args.players
    half = players // 2
    print(
        f"python {platform.python_version()}: strong (seat turning) vs {players - 1} basic, "
        f"{games} games x {args.rounds} rounds per preset, {args.simulations} playouts a move"
    )
    print(f"a basic bot's top-half share {half / players:.0%}, average place {(players + 1) / 2}")
    for preset in args.presets:
        began = time.perf_counter()
        places = strong_places(preset, players, games, args.rounds, args.simulations)
        seconds = time.perf_counter() - began
        count = len(places)
        top = sum(place < half for place in places)
        low, high = wilson(top, count)
        mean = sum(places) / count + 1
        spread = math.sqrt(sum((p + 1 - mean) ** 2 for p in places) / max(count - 1, 1))
        margin = Z95 * spread / math.sqrt(count)
        print(
            f"{preset:12} {count:4} rounds  top half {top / count:6.1%} "
            f"[{low:.1%}, {high:.1%}]  average place {mean:.2f} "
            f"[{mean - margin:.2f}, {mean + margin:.2f}]  {seconds / count * 1000:6.0f} ms/round"
        )
    seconds = HOSTED.seconds or 0.0
    print(f"hosted budget {seconds * 1000:.0f} ms a move: {playouts_in(seconds):.0f} playouts here")


if __name__ == "__main__":
    main()
