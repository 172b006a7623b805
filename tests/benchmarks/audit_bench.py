"""Audit speed: stored events verified per second by ``president.audit.verify_table``.

First it records ``--games`` games (default 1,000) into a fresh SQLite event
store, through the real table service code: ``TableHost`` with a seeded
``LocalDealer``. A *game* here is one table: created, four bots sit down, the
game starts, one round is committed, dealt, played to its end by the bots
(as their own commands, with timeouts where rapid mode needs them) and
revealed, then the host ends the game. Presets take turns (classic, club,
house, house-rapid, traditional), so every rule set is in the mix; a game is
about 80 to 100 stored events. To record fast, the benchmark's SQLite file
runs with ``synchronous=OFF`` (no fsync per append); the audit only reads.

Then it times, separately and each ``--repeat`` times (best run counts):

- reading: listing the table streams and reading each with its unhashed
  command columns (``read_audited_stream``), as ``president audit verify`` does;
- verifying: ``verify_table`` over the events already in memory (hash chain,
  committed deals re-created from their secrets, every command replayed
  through the rules, times and timeouts, actors, metadata, canonical
  payloads and the command columns);
- the two together, as ``president audit verify`` does them: the number the
  target is about.

Target: 20,000 events/s read and verified. Prints the numbers, asserts nothing.
``--profile`` prints the verifier's top functions by cumulative time.

Run: ``.venv/bin/python tests/benchmarks/audit_bench.py [--games 1000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import cProfile
import platform
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import event  # noqa: E402

from president import audit  # noqa: E402
from president.cli.audit_cmd import read_audited_tables, table_streams  # noqa: E402
from president.play.recorded import record_bot_game, seeded_host  # noqa: E402
from president.rules.options import PRESETS, options_for  # noqa: E402
from president.store import EventStore, StoredEvent, migrate  # noqa: E402
from president.store.columns import CommandColumns  # noqa: E402

Table = tuple[list[StoredEvent], list[CommandColumns]]

TARGET = 20_000
PLAYERS = 4


def open_fast(url: str) -> EventStore:
    """The store, with SQLite's per-commit fsync off: recording is not what is measured."""
    store = EventStore.from_url(url)

    @event.listens_for(store.engine, "connect")
    def _no_sync(dbapi_connection: Any, _: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA synchronous = OFF")
        cursor.close()

    store.engine.dispose()  # reconnect with the pragma
    return store


def record(store: EventStore, games: int) -> float:
    """Record ``games`` one-round games; returns the seconds it took."""
    started = time.perf_counter()
    for index in range(games):
        options = options_for(PRESETS[index % len(PRESETS)])
        host, clock = seeded_host(store, index)
        record_bot_game(
            host, options, PLAYERS, rounds=1, table_id=f"bench-{index:05d}", clock=clock
        )
        if (index + 1) % 100 == 0:
            print(f"  recorded {index + 1} games", end="\r", flush=True)
    print(" " * 30, end="\r")
    return time.perf_counter() - started


def read_all(store: EventStore) -> tuple[list[Table], float]:
    started = time.perf_counter()
    tables = list(read_audited_tables(store, table_streams(store)))
    return tables, time.perf_counter() - started


def verify_all(tables: list[Table]) -> tuple[list[audit.TableReport], float]:
    started = time.perf_counter()
    reports = [audit.verify_table(events, columns=columns) for events, columns in tables]
    return reports, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="profile one verification run")
    args = parser.parse_args()

    print(f"Python {platform.python_version()} on {platform.machine()}, one core")
    with tempfile.TemporaryDirectory(prefix="audit-bench-") as directory:
        url = f"sqlite:///{Path(directory) / 'store.db'}"
        migrate(url)
        store = open_fast(url)
        try:
            seconds = record(store, args.games)
            tables, _ = read_all(store)
            events = sum(len(events) for events, _ in tables)
            print(
                f"recorded {args.games} games, {events} events in {seconds:.1f} s "
                f"({events / seconds:,.0f} events/s through TableHost), "
                f"{events / args.games:.0f} events per game"
            )
            read_best = verify_best = both_best = both_cpu = float("inf")
            for _ in range(args.repeat):
                tables, read_seconds = read_all(store)
                reports, verify_seconds = verify_all(tables)
                started, cpu_started = time.perf_counter(), time.process_time()
                for stream, columns in read_audited_tables(store, table_streams(store)):
                    audit.verify_table(stream, columns=columns)
                both_seconds = time.perf_counter() - started
                both_cpu = min(both_cpu, time.process_time() - cpu_started)
                read_best = min(read_best, read_seconds)
                verify_best = min(verify_best, verify_seconds)
                both_best = min(both_best, both_seconds)
            summary = audit.summarise(reports)
            assert summary.ok, summary.first_problem
            if args.profile:
                profiler = cProfile.Profile()
                profiler.enable()
                verify_all(tables)
                profiler.disable()
                pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        finally:
            store.close()

    rate = events / both_best
    print(f"\n{'':24}{'seconds':>10}{'events/s':>14}")
    print(f"{'read (store)':24}{read_best:>10.2f}{events / read_best:>14,.0f}")
    print(f"{'verify (in memory)':24}{verify_best:>10.2f}{events / verify_best:>14,.0f}")
    print(f"{'read + verify':24}{both_best:>10.2f}{events / both_best:>14,.0f}")
    print(
        f"{'read + verify, CPU time':24}{both_cpu:>10.2f}{events / both_cpu:>14,.0f}"
        "  (this process's CPU: what a loaded machine's wall clock hides)"
    )
    print(
        f"\n{summary.tables} tables, {summary.rounds_verified} rounds, "
        f"{summary.events} events verified; target {TARGET:,} events/s read and verified: "
        + ("met" if rate >= TARGET else "NOT met")
        + f" ({rate / TARGET:.1f}x)"
    )


if __name__ == "__main__":
    main()
