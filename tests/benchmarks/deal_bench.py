"""Deals per second of president.deal (DEAL.md), for 4 and 7 players.

Run: .venv/bin/python tests/benchmarks/deal_bench.py [--seconds S]

Each case deals from fresh secrets (made before the clock starts) for about
S seconds, three times, and prints the best rate.
"""

from __future__ import annotations

import argparse
import hashlib
import time

from president.deal import deal, hand_size_for

CASES = [
    ("4 players", 4, False, False),
    ("4 players, jokers", 4, True, False),
    ("7 players", 7, False, False),
    ("7 players, extras set aside", 7, False, True),
]


def rate(players: int, jokers: bool, discard: bool, seconds: float) -> float:
    order = list(range(players))
    hand_size = hand_size_for(54 if jokers else 52, players, discard)
    secrets = [hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(4096)]
    best = 0.0
    for _ in range(3):
        count = 0
        start = time.perf_counter()
        end = start + seconds
        while time.perf_counter() < end:
            batch = count % len(secrets)
            for secret in secrets[batch : batch + 256]:
                deal(secret, order, jokers=jokers, hand_size=hand_size)
            count += 256
        best = max(best, count / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per run (3 runs a case)")
    arguments = parser.parse_args()
    for name, players, jokers, discard in CASES:
        per_second = rate(players, jokers, discard, arguments.seconds)
        print(f"{name:<30} {per_second:>10,.0f} deals/s  {1e6 / per_second:6.1f} µs/deal")


if __name__ == "__main__":
    main()
