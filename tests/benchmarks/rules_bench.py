"""Rules engine speed, per preset, on one core: prints numbers, asserts nothing.

- actions/s: recorded plays and passes of bot rounds, each validated and
  applied again (``round.step``); rejected actions are timed apart.
- rounds/s: whole four-player rounds, bots choosing every move.

Rates are per second of this process's CPU time (``time.process_time``): on a
machine shared with other work, wall time measures the neighbours too.

Run: ``make bench`` or ``.venv/bin/python tests/benchmarks/rules_bench.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import time

from president.deal import deal
from president.rules import bots
from president.rules import round as rnd
from president.rules.cards import to_mask
from president.rules.errors import Rejected
from president.rules.options import PRESETS, Options, options_for

ROUNDS = 300


def _hands(options: Options, players: int, index: int) -> list[int]:
    secret = hashlib.sha256(f"bench/{index}".encode()).digest()
    size = 52 // players if options.deal_extras == "discard" else None
    return [to_mask(hand) for hand in deal(secret, range(players), hand_size=size).hands]


def _bot_round(options: Options, hands: list[int]) -> tuple[rnd.RoundState, list[rnd.Command]]:
    state, _ = rnd.start_round(options, hands)
    start = state
    commands: list[rnd.Command] = []
    turn = 0
    while state.phase != rnd.RoundPhase.OVER:
        command: rnd.Command | None = None
        if options.rapid:
            for offset in range(len(hands)):
                command = bots.choose_action(state, (turn + offset) % len(hands))
                if command is not None:
                    break
            turn += 1
        else:
            command = bots.choose_action(state, state.to_act)
        command = command or rnd.Timeout()
        state, _ = rnd.step(state, command)
        commands.append(command)
    return start, commands


def _rejections(
    start: rnd.RoundState, commands: list[rnd.Command]
) -> list[tuple[rnd.RoundState, rnd.Command]]:
    """Each recorded state paired with a move the rules refuse there."""
    cases = []
    state = start
    for command in commands:
        if isinstance(command, rnd.PlayCards | rnd.Pass) and not state.options.rapid:
            wrong_seat = (state.to_act + 1) % state.seat_count
            cases.append(
                (
                    state,
                    rnd.PlayCards(wrong_seat, state.hands[wrong_seat] & -state.hands[wrong_seat]),
                )
            )
            other = state.hands[(state.to_act + 2) % state.seat_count]
            if other:
                cases.append((state, rnd.PlayCards(state.to_act, other & -other)))
        state, _ = rnd.step(state, command)
    return cases


def bench_preset(preset: str) -> dict[str, float]:
    options = options_for(preset)
    recorded = [_bot_round(options, _hands(options, 4, i)) for i in range(ROUNDS)]
    actions = sum(len(commands) for _, commands in recorded)
    step = rnd.step
    began = time.process_time()
    for start, commands in recorded:
        state = start
        for command in commands:
            state, _ = step(state, command)
    applied = time.process_time() - began

    cases = [case for start, commands in recorded[:100] for case in _rejections(start, commands)]
    decide = rnd.decide
    began = time.process_time()
    for state, command in cases:
        try:
            decide(state, command)
        except Rejected:
            pass
    refused = time.process_time() - began

    deals = [_hands(options, 4, i) for i in range(ROUNDS)]
    began = time.process_time()
    for hands in deals:
        _bot_round(options, hands)
    whole = time.process_time() - began
    return {
        "actions_per_s": actions / applied,
        "rejections_per_s": len(cases) / refused if cases else float("nan"),
        "rounds_per_s": ROUNDS / whole,
        "actions_per_round": actions / ROUNDS,
    }


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(
        f"rules engine on {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, one core (CPU time), {ROUNDS} four-player rounds per preset"
    )
    print(
        f"{'preset':<13}{'actions/s':>12}{'rejections/s':>14}"
        f"{'bot rounds/s':>14}{'actions/round':>15}"
    )
    for preset in PRESETS:
        result = bench_preset(preset)
        print(
            f"{preset:<13}{result['actions_per_s']:>12,.0f}{result['rejections_per_s']:>14,.0f}"
            f"{result['rounds_per_s']:>14,.0f}{result['actions_per_round']:>15.1f}"
        )


if __name__ == "__main__":
    main()
