#!/usr/bin/env python3
"""Build the TypeScript client package: its packages as the lockfile pins them, the code
generated from ``protos/`` (the gateway and what it imports, with google.rpc's error
details), and tsc's JavaScript and typings in ``dist/``.

    python clients/typescript/build.py   # npm ci, protos/generate_es.py, tsc
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
#: The protos a client needs: the public gateway, the messages it uses, the error details.
PUBLIC_PROTOS = (
    "president/gateway/v1/*.proto",
    "president/players/v1/*.proto",
    "president/game/v1/*.proto",
    "president/events/v1/*.proto",
    "president/standings/v1/*.proto",
    "president/tournaments/v1/*.proto",
    "google/rpc/*.proto",
)


def build() -> None:
    sys.path.insert(0, str(ROOT / "web"))
    import npm

    env = npm.node_environment()
    installed = npm.ci(HERE)
    if installed.returncode != 0:
        print(installed.stdout, installed.stderr, file=sys.stderr)
        raise SystemExit("npm ci failed")
    only = [argument for pattern in PUBLIC_PROTOS for argument in ("--only", pattern)]
    generate = [sys.executable, str(ROOT / "protos" / "generate_es.py"), str(HERE)]
    subprocess.run(
        [*generate, str(HERE / "src" / "gen"), "--opt", "import_extension=js", *only],
        check=True,
        env=env,
    )
    subprocess.run(
        [str(HERE / "node_modules" / ".bin" / "tsc"), "-p", "."], check=True, cwd=HERE, env=env
    )


if __name__ == "__main__":
    build()
