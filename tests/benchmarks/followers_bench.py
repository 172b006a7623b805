"""Stream followers' speed: the timer's replay and scoring's exactly-once apply, events per second.

First it records ``--tables`` tables (default 200) into a fresh SQLite event
store through ``TableHost`` with a seeded ``LocalDealer``: four bots, a house
game of two rounds each (about 200 stored events per table). Then it times:

- timer replay: every envelope folded into the timer's ``Clocks`` (the
  engine's fold plus the deadline rules), what a restarted timer does before
  it fires anything;
- scoring apply: half the envelopes one transaction each (``ScoringStore.apply``:
  progress row lock, read models, progress), the other half in transactions
  of 200 (``apply_batch``, as the consumer applies a fetch), on a SQLite file
  and, when one answers on 127.0.0.1:5432, on a fresh PostgreSQL database;
- scoring redelivery: every envelope again (each one a skipped no-op).

Prints the numbers, asserts nothing.

Run: ``.venv/bin/python tests/benchmarks/followers_bench.py [--tables 200]``
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from president.events.v1 import events_pb2 as pb  # noqa: E402
from president.hosting.dealer import LocalDealer  # noqa: E402
from president.hosting.host import TableHost  # noqa: E402
from president.hosting.streams import stream_id  # noqa: E402
from president.rules import game as g  # noqa: E402
from president.rules.options import options_for  # noqa: E402
from president.servicekit.nats import envelope  # noqa: E402
from president.services.scoring.store import ScoringStore  # noqa: E402
from president.services.timer.deadlines import Clocks, DeadlineBoard  # noqa: E402
from president.store import EventStore, migrate  # noqa: E402

POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
BATCH = 200  # what the consumer fetches at once


def record(store: EventStore, tables: int) -> list[pb.EventEnvelope]:
    host = TableHost(store, LocalDealer(secret_for=lambda key: bytes([key.round_no % 256]) * 32))
    options = options_for("house", {"game_end": "rounds:2"})
    out: list[pb.EventEnvelope] = []
    for number in range(tables):
        table_id = f"bench{number}"
        host.create(table_id, options, seat_count=4)
        for seat in range(4):
            host.decide_and_append(
                table_id, g.SitDown(seat, f"bot{seat}", True), f"{table_id}-{seat}", "x"
            )
        host.decide_and_append(table_id, g.StartGame(), f"{table_id}-start", "x")
        host.decide_and_append(table_id, g.NextRound(), f"{table_id}-next", "x")
        out.extend(envelope(stored) for stored in store.read_stream(stream_id(table_id)))
    return out


def rate(count: int, seconds: float) -> str:
    return f"{count:,} events in {seconds:.2f} s: {count / seconds:,.0f} events/s"


def bench_scoring(url: str, envelopes: list[pb.EventEnvelope], label: str) -> None:
    half = len(envelopes) // 2
    one_by_one, batched = envelopes[:half], envelopes[half:]
    migrate(url)
    store = ScoringStore(url)
    try:
        started = time.perf_counter()
        for item in one_by_one:
            store.apply(item)
        took = time.perf_counter() - started
        print(f"scoring apply, one per transaction ({label}): {rate(len(one_by_one), took)}")
        started = time.perf_counter()
        for first in range(0, len(batched), BATCH):
            store.apply_batch(batched[first : first + BATCH])
        took = time.perf_counter() - started
        print(f"scoring apply, {BATCH} per transaction ({label}): {rate(len(batched), took)}")
        started = time.perf_counter()
        for first in range(0, len(envelopes), BATCH):
            store.apply_batch(envelopes[first : first + BATCH])
        took = time.perf_counter() - started
        print(f"scoring redelivery, all skipped ({label}): {rate(len(envelopes), took)}")
    finally:
        store.close()


def postgres_database() -> tuple[str, str] | None:
    try:
        import psycopg

        with psycopg.connect("host=127.0.0.1 user=postgres dbname=postgres", autocommit=True) as c:
            name = f"followers_bench_{int(time.time())}"
            c.execute(f'CREATE DATABASE "{name}"')
    except Exception:
        return None
    return POSTGRES.rsplit("/", 1)[0] + f"/{name}", name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=200)
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {args.tables} tables")
    with tempfile.TemporaryDirectory() as directory:
        events = EventStore.from_url(f"sqlite:///{directory}/events.db", migrate=True)
        started = time.perf_counter()
        envelopes = record(events, args.tables)
        events.close()
        print(f"recorded {rate(len(envelopes), time.perf_counter() - started)}")

        clocks = Clocks(DeadlineBoard())
        now = datetime.now(UTC)
        started = time.perf_counter()
        for item in envelopes:
            clocks.apply(item, now)
        print(f"timer replay: {rate(len(envelopes), time.perf_counter() - started)}")

        bench_scoring(f"sqlite:///{directory}/scoring.db", envelopes, "SQLite")
    database = postgres_database()
    if database is None:
        print("scoring apply (PostgreSQL): skipped, no server on 127.0.0.1:5432")
        return
    url, name = database
    try:
        bench_scoring(url, envelopes, "PostgreSQL")
    finally:
        import psycopg

        with psycopg.connect("host=127.0.0.1 user=postgres dbname=postgres", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
