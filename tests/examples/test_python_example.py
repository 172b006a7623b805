"""The Python client package, installed alone, as a client developer installs it.

The wheel is built from ``clients/python`` (the client's own files in ``libs/`` and the
generated code it imports), installed with only its declared dependencies into a fresh
virtual environment, and ``examples/python/quickstart.py`` runs there against a real
stack: a guest signs in, creates a practice table, reads it, and reads a refusal's
reason. The server's packages (SQLAlchemy, Alembic, psycopg, NATS, uvicorn) are not
importable there: before this package, the client came only with the whole server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from president.servicekit.launcher import Stack

ROOT = Path(__file__).resolve().parents[2]
CLIENT_PACKAGE = ROOT / "clients" / "python"
EXAMPLE = ROOT / "examples" / "python" / "quickstart.py"
SERVER_ONLY = ("sqlalchemy", "alembic", "psycopg", "nats", "uvicorn", "starlette")


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
    assert report["seats"] == 4 and report["phase"] == "lobby"
    assert report["refusal"] == {"code": "NOT_FOUND", "reason": "TABLE_NOT_FOUND"}
