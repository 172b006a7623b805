"""Random play through ``legal_actions``, per preset, on one core: prints numbers, asserts nothing.

Each four-player round is played to its end by random legal moves: whoever may act
(in rapid mode, every seat in a shuffled order until one has a move) takes a random
entry of ``legal_actions``, and ``round.step`` applies it. actions/s counts the moves
applied per second of the whole loop (listing, choosing and applying); lists/s counts
the ``legal_actions`` calls.

Rates are per second of this process's CPU time (``time.process_time``): on a
machine shared with other work, wall time measures the neighbours too.

Run: ``make bench`` or ``.venv/bin/python tests/benchmarks/legal_bench.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import random
import time

from president.deal import deal
from president.rules import round as rnd
from president.rules.cards import to_mask
from president.rules.options import PRESETS, Options, options_for

ROUNDS = 300


def _hands(options: Options, players: int, index: int) -> list[int]:
    secret = hashlib.sha256(f"legal-bench/{index}".encode()).digest()
    size = 52 // players if options.deal_extras == "discard" else None
    return [to_mask(hand) for hand in deal(secret, range(players), hand_size=size).hands]


def _play(start: rnd.RoundState, rng: random.Random) -> tuple[int, int]:
    """One round played out by random legal moves: (moves applied, lists asked)."""
    legal_actions, step, over = rnd.legal_actions, rnd.step, rnd.RoundPhase.OVER
    exchange, rapid = rnd.RoundPhase.EXCHANGE, start.options.rapid
    seats = list(range(start.seat_count))
    state, moves, lists = start, 0, 0
    while state.phase != over:
        command: rnd.Command = rnd.Timeout()
        if state.phase == exchange:
            giver = state.pending[0].giver
            lists += 1
            command = rnd.ReturnCards(giver, rng.choice(legal_actions(state, giver))[1])
        else:
            if rapid:
                rng.shuffle(seats)
                order = seats
            else:
                order = [state.to_act]
            for seat in order:
                lists += 1
                actions = legal_actions(state, seat)
                if actions:
                    verb, cards = rng.choice(actions)
                    command = rnd.Pass(seat) if verb == "pass" else rnd.PlayCards(seat, cards)
                    break
        state, _ = step(state, command)
        moves += 1
    return moves, lists


def bench_preset(preset: str) -> dict[str, float]:
    options = options_for(preset)
    starts = [rnd.start_round(options, _hands(options, 4, i))[0] for i in range(ROUNDS)]
    rng = random.Random(f"legal-bench/{preset}")
    moves = lists = 0
    began = time.process_time()
    for start in starts:
        played, asked = _play(start, rng)
        moves += played
        lists += asked
    elapsed = time.process_time() - began
    return {
        "actions_per_s": moves / elapsed,
        "lists_per_s": lists / elapsed,
        "actions_per_round": moves / ROUNDS,
    }


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(
        f"random legal play on {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, one core (CPU time), {ROUNDS} four-player rounds per preset"
    )
    print(f"{'preset':<13}{'actions/s':>12}{'lists/s':>12}{'actions/round':>15}")
    for preset in PRESETS:
        result = bench_preset(preset)
        print(
            f"{preset:<13}{result['actions_per_s']:>12,.0f}{result['lists_per_s']:>12,.0f}"
            f"{result['actions_per_round']:>15.1f}"
        )


if __name__ == "__main__":
    main()
