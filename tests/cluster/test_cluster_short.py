"""``make cluster-chaos``'s short subset in ``make test``: the deployment as hosts, one fault.

The zombie lease holder (SIGSTOP past its lease, then SIGCONT) at two tables
for a short run: nothing OK'd lost or doubled, watchers in order, JetStream
and scoring equal to the store, the audit passes, no table stuck, and the
events stream, commitment feed and lease bucket are each kept on all three
NATS servers. Skipped where the harness cannot build its hosts (not root, no
``ip netns``, no PostgreSQL server binaries), with the harness's own reason.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.network import NetworkUnavailable, require
from tests.cluster.postgres_pair import server_bin

RUNNER = Path(__file__).with_name("run_cluster.py")

pytestmark = pytest.mark.slow


def test_zombie_lease_holder_loses_nothing_on_the_deployment() -> None:
    try:
        require()
        server_bin()
    except (NetworkUnavailable, RuntimeError) as error:
        pytest.skip(str(error))
    done = subprocess.run(
        [sys.executable, str(RUNNER), "--only", "sigstop", "--tables", "2"]
        + ["--seconds", "10", "--fault-at", "3", "--fault-seconds", "4"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cluster-chaos: OK" in done.stdout
    assert "replication:" not in done.stdout
