"""``make chaos``: tables of bot clients through the gateway while one fault strikes.

For each fault, a stack of its own (the five services, table leases with two
replicas where the fault says so) on a PostgreSQL and a NATS server this
script starts (never the machine's shared ones), ``--tables`` tables of two
seat-bot clients and two server bots each, playing through the gateway; the
fault strikes ``--fault-at`` seconds in, the load runs ``--seconds`` in all.
Then it checks: plays that got an OK answer are stored once each (lost,
duplicated), every watcher's stream is in order without repeats, JetStream
holds each table's events as the store does (versions and hashes), scoring's finished
games equal a recompute from the store, the audit verifies every table, and
no table stood still longer than ``--stuck`` seconds. Three times are printed:
how long the struck process or server was away (``back_s``: its downtime,
then its start-up until it answered its health check, or accepted
connections, again), the longest pause of any table from a second before
the fault (``pause_s``: it includes ``back_s``), and the longest pause of
any table after the process or server was back (``after_s``: the recovery
itself). One table of results; the exit code is non-zero on
any loss, duplicate, disorder, mismatch, failed audit or stuck table.

    .venv/bin/python tests/chaos/run_chaos.py [--only nats,dealer] [--tables 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
# pg_ctl is started (as another user) while gRPC's threads run: without this, gRPC's
# fork handlers now and then crash the child before it runs pg_ctl.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

from president.servicekit.launcher import NatsServer, Stack  # noqa: E402
from president.store import migrate  # noqa: E402
from tests.chaos.checks import Row, Where, check, pauses, report  # noqa: E402
from tests.chaos.load import run_load  # noqa: E402
from tests.support.private_postgres import PrivatePostgres  # noqa: E402
from tests.support.servers import isolated_env  # noqa: E402

#: How long a killed service or server stays down before it is started again.
DOWN_SECONDS = 3.0
#: How long PostgreSQL stays down.
POSTGRES_DOWN_SECONDS = 5.0


@dataclass
class Fault:
    """One fault: its name, the replicas it needs, and what it does to the running stack."""

    name: str
    replicas: int
    strike: Callable[[Stack, NatsServer, PrivatePostgres], None]


def _kill_and_restart(service: str) -> Callable[[Stack, NatsServer, PrivatePostgres], None]:
    def strike(stack: Stack, _nats: NatsServer, _pg: PrivatePostgres) -> None:
        stack.stop_one(service, kill=True)
        time.sleep(DOWN_SECONDS)
        stack.start_one(service)

    return strike


def _nats_kill(stack: Stack, server: NatsServer, _pg: PrivatePostgres) -> None:
    assert server.process is not None
    server.process.kill()
    server.process.wait()
    time.sleep(DOWN_SECONDS)
    server.start()


def _postgres(kill: bool) -> Callable[[Stack, NatsServer, PrivatePostgres], None]:
    def strike(_stack: Stack, _nats: NatsServer, pg: PrivatePostgres) -> None:
        pg.kill() if kill else pg.stop()
        time.sleep(POSTGRES_DOWN_SECONDS)
        pg.start()

    return strike


FAULTS = [
    Fault("table (no leases)", 1, _kill_and_restart("table")),
    Fault("table (leases, 2)", 2, _kill_and_restart("table")),
    Fault("gateway", 1, _kill_and_restart("gateway")),
    Fault("dealer", 1, _kill_and_restart("dealer")),
    Fault("timer", 1, _kill_and_restart("timer")),
    Fault("scoring", 1, _kill_and_restart("scoring")),
    Fault("nats kill -9", 1, _nats_kill),
    Fault("postgres stop", 1, _postgres(kill=False)),
    Fault("postgres kill -9", 1, _postgres(kill=True)),
]


def run_fault(fault: Fault, args: Any, workdir: Path) -> Row:
    row = Row(fault.name)
    pg = PrivatePostgres()
    nats_server = NatsServer(workdir / "nats").start()
    stack: Stack | None = None
    try:
        url = pg.create_database("chaos")
        migrate(url)
        stack = Stack(workdir / "stack", url, nats_server.url, isolated_env())
        stack.table_replicas = fault.replicas
        stack.start()
        running = stack

        def strike() -> None:
            fault.strike(running, nats_server, pg)

        run = asyncio.run(
            run_load([stack.gateway], args.tables, args.seconds, args.fault_at, strike)
        )
        pauses(row, run, args.stuck)
        where = Where(
            url,
            stack.nats_url,
            stack.env["PRESIDENT_SUBJECT_PREFIX"],
            stack.address("scoring"),
            Path(args.workdir),
        )
        check(row, run.loads, where)
    except Exception as error:
        row.audit += 1
        row.notes.append(f"the run failed: {error!r}")
    finally:
        if stack is not None:
            stack.stop()
        nats_server.stop()
        pg.close()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=4, help="tables of bot clients")
    parser.add_argument("--seconds", type=float, default=30.0, help="load per fault")
    parser.add_argument("--fault-at", type=float, default=8.0, help="when the fault strikes")
    parser.add_argument("--stuck", type=float, default=20.0, help="a pause longer is stuck")
    parser.add_argument("--only", default="", help="comma-separated words of fault names")
    parser.add_argument("--keep", default="", help="keep the stacks' logs under this directory")
    args = parser.parse_args(argv)
    words = [word for word in args.only.split(",") if word]
    chosen = [f for f in FAULTS if not words or any(w in f.name for w in words)]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="president-chaos-") as temporary:
        directory = args.keep or temporary
        Path(directory).mkdir(parents=True, exist_ok=True)
        args.workdir = directory
        for fault in chosen:
            print(f"== {fault.name} ...", flush=True)
            workdir = Path(directory) / uuid.uuid4().hex[:8]
            workdir.mkdir()
            rows.append(run_fault(fault, args, workdir))
            for note in rows[-1].notes:
                print(f"   {note}", flush=True)
    return report(rows, "chaos")


if __name__ == "__main__":
    sys.exit(main())
