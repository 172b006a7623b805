"""Ratings' cost inside scoring: rounds folded in order, and a late table folded again.

Records ``--tables`` tables (default 60) as ``followers_bench.py`` does (four
players, a house game of two rounds each, every table the same four
accounts, so every round moves the same ratings), then, on a SQLite file:

- scoring apply, 200 envelopes a transaction, of every table but the first,
  in order (each batch folds its new rounds on from the ratings as they are);
- the first table's envelopes last: its rounds ended before every other
  one, so the whole preset is folded again from its first round (the worst
  case of a late message);
- GetLeaderboard's query (the rating board's first page and an account's
  neighbours), and an account's history and totals.

Prints the numbers, asserts nothing.

Run: ``.venv/bin/python tests/benchmarks/ratings_bench.py [--tables 60]``
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from president.services.scoring.store import ScoringStore  # noqa: E402
from president.store import EventStore, migrate  # noqa: E402
from tests.benchmarks.followers_bench import BATCH, rate, record  # noqa: E402

QUERIES = 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=60)
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {args.tables} tables")
    with tempfile.TemporaryDirectory() as directory:
        events = EventStore.from_url(f"sqlite:///{directory}/events.db", migrate=True)
        envelopes = record(events, args.tables)
        events.close()
        late = [item for item in envelopes if item.stream_id == "table-bench0"]
        rest = [item for item in envelopes if item.stream_id != "table-bench0"]
        url = f"sqlite:///{directory}/scoring.db"
        migrate(url)
        store = ScoringStore(url)
        try:
            started = time.perf_counter()
            for first in range(0, len(rest), BATCH):
                store.apply_batch(rest[first : first + BATCH])
            took = time.perf_counter() - started
            print(f"scoring apply with ratings, in order: {rate(len(rest), took)}")
            rounds = 2 * args.tables
            started = time.perf_counter()
            store.apply_batch(late)
            took = time.perf_counter() - started
            print(
                f"a late table ({len(late)} events) folds {rounds} rounds again: "
                f"{took * 1000:.0f} ms"
            )
            for name, query in (
                (
                    "rating board, first page",
                    lambda: store.ratings.board("house", "rating", "all", 0, 50),
                ),
                (
                    "rating board around an account",
                    lambda: store.ratings.board("house", "rating", "all", 0, 10, "bot1", 2),
                ),
                (
                    "history page and totals",
                    lambda: (store.ratings.history("bot1", 0, 50), store.ratings.totals("bot1")),
                ),
            ):
                started = time.perf_counter()
                for _ in range(QUERIES):
                    query()
                took = time.perf_counter() - started
                print(f"{name}: {took / QUERIES * 1000:.2f} ms each")
        finally:
            store.close()


if __name__ == "__main__":
    main()
