"""Event store appends/s on PostgreSQL, side by side with the ``eventsourcing`` library.

Each writer is its own process (no shared GIL) with its own connection and
appends one event (a 100-byte payload) at a time to its own stream, for a
fixed time after a common start. Both stores run on the same server, in the
same fresh database, taking turns: ours, then the library's
``PostgresApplicationRecorder``, which takes a table lock per append so that
its readers never skip an event. A third row, "bare INSERT", is a plain
psycopg INSERT per append into the same table, with no store logic: the
ceiling of this machine, for scale. Each case runs ``--rounds`` times,
interleaved, and the best run counts (other load on the machine only ever
slows a run down). Prints a table and the ratios; asserts nothing. The
server is the machine's (127.0.0.1:5432) or an embedded one, as for the tests.

Run: ``.venv/bin/python tests/benchmarks/store_bench.py [--seconds 2.5] [--rounds 3] [--writers 8]``
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
import uuid
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PAYLOAD = bytes(range(100))
WARM_UP = 50


def _ours(url: str, worker: int) -> Any:
    from president.store import EventStore, NewEvent

    store = EventStore.from_url(url, pool_size=1, max_overflow=0)
    stream = f"table-bench-{worker}-{uuid.uuid4().hex[:8]}"
    version = 0

    def append() -> None:
        nonlocal version
        event = NewEvent("president.events.v1.CardsPlayed", PAYLOAD, {"actor": f"p{worker}"})
        store.append(stream, version, [event], uuid.uuid4().hex)
        version += 1

    return append, store.close


def _library(url: str, worker: int) -> Any:
    from eventsourcing.persistence import StoredEvent
    from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    datastore = PostgresDatastore(
        parsed.database or "",
        parsed.host or "127.0.0.1",
        parsed.port or 5432,
        parsed.username or "postgres",
        parsed.password or "",
        pool_size=1,
    )
    recorder = PostgresApplicationRecorder(datastore)
    originator = uuid.uuid4()
    version = 0

    def append() -> None:
        nonlocal version
        version += 1
        recorder.insert_events(
            [StoredEvent(originator, version, "president.events.v1.CardsPlayed", PAYLOAD)]
        )

    return append, datastore.close


def _bare(url: str, worker: int) -> Any:
    """The machine's ceiling: one plain INSERT per append into the same table, no store."""
    import psycopg
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    connection = psycopg.connect(
        host=parsed.host,
        port=parsed.port,
        user=parsed.username,
        dbname=parsed.database,
        autocommit=True,
    )
    stream = f"table-bare-{worker}-{uuid.uuid4().hex[:8]}"
    version = 0
    statement = (
        "INSERT INTO events (stream_id, version, type, payload, metadata, command_id,"
        " command_seq, hash, previous_hash) VALUES (%s, %s, %s, %s, %s, %s, 0, %s, %s)"
        " RETURNING tx_id, id"
    )

    def append() -> None:
        nonlocal version
        version += 1
        connection.execute(
            statement,
            (stream, version, "t", PAYLOAD, "{}", uuid.uuid4().hex, "0" * 64, "0" * 64),
        ).fetchall()

    return append, connection.close


SETUPS = {"president.store": _ours, "eventsourcing": _library, "bare INSERT": _bare}


def _worker(kind: str, url: str, worker: int, seconds: float, start: Barrier, counts: Any) -> None:
    append, close = SETUPS[kind](url, worker)
    try:
        for _ in range(WARM_UP):
            append()
        start.wait()
        done = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            append()
            done += 1
        counts.put(done)
    finally:
        close()


def measure(kind: str, url: str, writers: int, seconds: float) -> float:
    """Appends per second of ``writers`` processes appending for ``seconds``."""
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(writers)
    counts = context.Queue()
    processes = [
        context.Process(target=_worker, args=(kind, url, i, seconds, start, counts))
        for i in range(writers)
    ]
    for process in processes:
        process.start()
    total = sum(counts.get(timeout=seconds + 120) for _ in processes)
    for process in processes:
        process.join(timeout=30)
        if process.exitcode != 0:
            raise SystemExit(f"a {kind} writer failed (exit code {process.exitcode})")
    return total / seconds


def prepare(url: str) -> None:
    """Create both stores' tables in the database."""
    from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
    from sqlalchemy.engine import make_url

    from president.store import migrate

    migrate(url)
    parsed = make_url(url)
    datastore = PostgresDatastore(
        parsed.database or "",
        parsed.host or "127.0.0.1",
        parsed.port or 5432,
        parsed.username or "postgres",
        parsed.password or "",
    )
    PostgresApplicationRecorder(datastore).create_table()
    datastore.close()


def main() -> int:
    """Run every measurement and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.5, help="per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each, best kept")
    parser.add_argument("--writers", type=int, default=8, help="concurrent writers")
    options = parser.parse_args()

    from tests.support.postgres import postgres_server_for_tests

    server = postgres_server_for_tests()
    try:
        url = server.create_database("bench")
        prepare(url)
        with _connect(url) as connection:
            version = connection.execute("SHOW server_version").fetchone()
        print(
            f"PostgreSQL {version[0] if version else '?'} at {server.admin_url.host}:"
            f"{server.admin_url.port}, {multiprocessing.cpu_count()} CPUs, "
            f"{options.seconds:g} s per run, best of {options.rounds}, one event per append"
        )
        samples: dict[tuple[str, int], list[float]] = {}
        for _ in range(options.rounds):  # interleaved, so a busy moment hits both stores
            for writers in (1, options.writers):
                for kind in SETUPS:
                    rate = measure(kind, url, writers, options.seconds)
                    samples.setdefault((kind, writers), []).append(rate)
        results = {key: max(rates) for key, rates in samples.items()}
        print()
        print(f"{'store':<18}{'writers':>8}{'appends/s':>12}{'ms/append':>12}   all runs")
        for (kind, writers), rate in results.items():
            runs = ", ".join(f"{r:,.0f}" for r in samples[kind, writers])
            print(f"{kind:<18}{writers:>8}{rate:>12,.0f}{1000 * writers / rate:>12.2f}   {runs}")
        print()
        for writers in (1, options.writers):
            library = results["eventsourcing", writers]
            ratio = results["president.store", writers] / library
            target = 1 if writers == 1 else 5
            verdict = "meets" if ratio >= target else "misses"
            print(
                f"{writers} writer(s): president.store / eventsourcing = {ratio:.2f}x "
                f"({verdict} the {target}x target); "
                f"bare INSERT / eventsourcing = {results['bare INSERT', writers] / library:.2f}x"
            )
    finally:
        server.close()
    return 0


def _connect(url: str) -> Any:
    import psycopg
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    return psycopg.connect(
        host=parsed.host, port=parsed.port, user=parsed.username, dbname=parsed.database
    )


if __name__ == "__main__":
    sys.exit(main())
