"""``make cluster-chaos``: the recommended deployment as hosts on one machine, and the faults
between them, each under load.

The hosts are Linux network namespaces on a bridge this script creates and
removes (:mod:`tests.cluster.network`): three NATS servers clustered, a
PostgreSQL primary and its streaming standby, two table replicas with leases,
two gateways, dealer/timer/scoring/players, and the clients
(:mod:`tests.cluster.deployment`). For each fault (:mod:`tests.cluster.faults`),
a fresh deployment; ``--tables`` tables of bot clients play through both
gateways; the fault strikes ``--fault-at`` seconds in; then the checks of
``make chaos`` (:mod:`tests.chaos.checks`). One table of results; the exit
code is non-zero on any loss, duplicate, disorder, mismatch, failed audit or
stuck table (no change for ``--stuck`` seconds).

Needs root, ``ip netns`` (iproute2), PostgreSQL's server binaries and, for the clock
faults, Debian's libfaketime (``make faketime``); it says
so and stops otherwise. Everything it made is removed at the end, also on
failure or Ctrl-C; ``make cluster-chaos-clean`` removes what a killed run left.

    .venv/bin/python tests/cluster/run_cluster.py [--only sigstop] [--tables 4]
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

from president.hosting.deadlines import EXCHANGE, TURN  # noqa: E402
from tests.chaos.checks import Row, Where, check, pauses, report  # noqa: E402
from tests.chaos.load import run_load  # noqa: E402
from tests.cluster.deployment import (  # noqa: E402
    CLIENT_HOST,
    HOSTS,
    SUBJECT_PREFIX,
    Deployment,
    libfaketime,
)
from tests.cluster.faults import FAULT_SECONDS, FAULTS, Fault, replication_problems  # noqa: E402
from tests.cluster.network import Network, NetworkUnavailable, addresses, require  # noqa: E402
from tests.cluster.postgres_pair import server_bin  # noqa: E402

#: Held while a run has the machine's hosts (another run waits for it).
LOCK = "/run/lock/president-cluster-chaos.lock"


def run_fault(fault: Fault, network: Network, args: Any, workdir: Path) -> Row:
    row = Row(fault.name)
    deployment = Deployment(network, workdir, fault.synchronous_postgres, fault.skews)
    try:
        deployment.start()
        for problem in replication_problems(deployment):
            row.audit += 1  # counted with the failed runs: the deployment is not as deployed
            row.notes.append(f"replication: {problem}")
        run = asyncio.run(
            run_load(
                deployment.client_targets,
                args.tables,
                args.seconds,
                args.fault_at,
                lambda: fault.strike(deployment, args.fault_seconds),
            )
        )
        load_ended = datetime.now(UTC)
        pauses(row, run, args.stuck)
        where = Where(
            deployment.database_url(),
            deployment.nats_url,
            SUBJECT_PREFIX,
            deployment.scoring,
            workdir,
        )
        check(row, run.loads, where)
        early = early_timeouts(workdir / "timer-svc.log", load_ended)
        if early:
            row.audit += early
            row.notes.append(
                f"deadlines: the timer timed out {early} turns or exchanges (the bots act at "
                "once and no table stood still a turn's 30 s: each fired early)"
            )
        if fault.loses_by_design:
            excuse(row)
    except Exception as error:
        row.audit += 1
        row.notes.append(f"the run failed: {error!r}")
    finally:
        network.heal()
        deployment.stop()
    return row


def early_timeouts(log: Path, until: datetime) -> int:
    """The turn and exchange timeouts the timer's log says acted while the bots played (none
    is due then; the server's own deadlines, a deal the dealer owes for one, may come, and
    a table's turn may time out once the bots stopped, during the checks)."""
    acted = 0
    for line in log.read_text(errors="replace").splitlines() if log.exists() else []:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("event") != "timeout acted" or entry.get("kind") not in (TURN, EXCHANGE):
            continue
        acted += datetime.fromisoformat(str(entry.get("timestamp"))) <= until
    return acted


def excuse(row: Row) -> None:
    """Print what asynchronous replication lost, and keep it from failing the run."""
    row.excused = True
    row.notes.append(
        f"lost by design (asynchronous standby): {row.lost} OK'd plays; JetStream "
        f"differs from the store at {row.jetstream} tables (synchronous_commit with "
        "synchronous_standby_names prevents it); scoring, which reads a rewound table "
        f"again, differs at {row.scoring} (not excused)"
    )


def inside(args: Any) -> int:
    """On the client host: each fault on a deployment of its own, then the table."""
    network = Network(hosts=addresses(HOSTS))
    rows: list[Row] = []
    for number, fault in enumerate(chosen(args.only)):
        print(f"== {fault.name} ...", flush=True)
        workdir = Path(args.workdir) / f"{number}-{fault.name.replace(' ', '-')}"
        rows.append(run_fault(fault, network, args, workdir))
        for note in rows[-1].notes:
            print(f"   {note}", flush=True)
    return report(rows, "cluster-chaos", back="over_s")


def chosen(only: str) -> list[Fault]:
    """The faults ``--only`` names (comma-separated words of their names), or all."""
    words = [word.lower() for word in only.split(",") if word]
    return [f for f in FAULTS if not words or any(w in f.name.lower() for w in words)]


def _interrupted(_number: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=4, help="tables of bot clients")
    parser.add_argument("--seconds", type=float, default=35.0, help="load per fault")
    parser.add_argument("--fault-at", type=float, default=8.0, help="when the fault strikes")
    parser.add_argument(
        "--fault-seconds", type=float, default=FAULT_SECONDS, help="how long a cut or pause lasts"
    )
    parser.add_argument("--stuck", type=float, default=20.0, help="a pause longer is stuck")
    parser.add_argument("--only", default="", help="comma-separated words of fault names")
    parser.add_argument("--keep", default="", help="keep the hosts' logs under this directory")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inside:
        return inside(args)
    try:
        require()
        server_bin()
        if any(fault.skews for fault in chosen(args.only)):
            libfaketime()
    except (NetworkUnavailable, RuntimeError) as error:
        print(f"cluster-chaos: {error}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _interrupted)
    # One run at a time on a machine: the hosts' names and addresses are fixed.
    with (
        open(LOCK, "w") as lock,
        tempfile.TemporaryDirectory(prefix="president-cluster-") as temporary,
    ):
        fcntl.flock(lock, fcntl.LOCK_EX)
        directory = Path(args.keep or temporary)
        directory.mkdir(parents=True, exist_ok=True)
        directory.chmod(0o755)  # PostgreSQL runs as postgres below it
        network = Network.create(HOSTS)
        try:
            forwarded = list(argv if argv is not None else sys.argv[1:])
            command = [
                *network.run_in(CLIENT_HOST),
                sys.executable,
                __file__,
                *forwarded,
                "--inside",
                "--workdir",
                str(directory),
            ]
            return subprocess.run(command, check=False).returncode
        finally:
            network.remove()


if __name__ == "__main__":
    sys.exit(main())
