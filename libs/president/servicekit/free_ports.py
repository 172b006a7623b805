"""Free TCP ports for the processes the launcher starts.

A port is free until its service binds it, so a port handed out must not be
handed out again meanwhile, by this process or by another. By default the
kernel picks one (a bind to port 0) and this process remembers what it handed
out. With ``PRESIDENT_PORT_RANGE=FIRST-LAST`` (the test suite sets it, below
the kernel's ephemeral range, where no outgoing connection takes a port), the
ports come from that range, and every process on the machine takes turns on
one cursor over it, kept in a file under an exclusive lock: a port comes round
again only after the whole range has been handed out, and is handed out only
when nothing is bound to it.
"""

from __future__ import annotations

import fcntl
import os
import socket
import tempfile
from pathlib import Path

from president.servicekit.config.tools import ToolSettings

RANGE_VARIABLE = "PRESIDENT_PORT_RANGE"

#: Ports :func:`free_port` handed out in this process (kernel-picked ones).
_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A TCP port nothing is bound to right now, and not handed out before (see above)."""
    span = port_range(ToolSettings.from_env().port_range)
    return _from_range(*span) if span else _from_kernel()


def port_range(text: str) -> tuple[int, int] | None:
    """``FIRST-LAST`` as two ports (None for ""); a clear error for anything else."""
    if not text.strip():
        return None
    first, dash, last = text.strip().partition("-")
    try:
        span = (int(first), int(last))
    except ValueError:
        span = (0, 0)
    if not dash or not 1024 <= span[0] <= span[1] <= 65535:
        raise ValueError(
            f"{RANGE_VARIABLE} is FIRST-LAST, two ports from 1024 to 65535 in order, got {text!r}"
        )
    return span


def bindable(port: int) -> bool:
    """Whether a listening socket could bind ``port`` on loopback now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _from_kernel() -> int:
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


def _from_range(first: int, last: int) -> int:
    """The next bindable port of the machine-wide cursor over ``first..last``."""
    size = last - first + 1
    cursor = Path(tempfile.gettempdir()) / f"president-ports-{first}-{last}"
    descriptor = os.open(cursor, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        text = os.pread(descriptor, 32, 0).decode(errors="replace").strip()
        offset = int(text) % size if text.isdigit() else 0
        for step in range(size):
            port = first + (offset + step) % size
            if bindable(port):
                written = str((port - first + 1) % size).encode().ljust(32)
                os.pwrite(descriptor, written, 0)
                return port
    finally:
        os.close(descriptor)  # releases the lock
    raise RuntimeError(f"no free port in {RANGE_VARIABLE} {first}-{last}: every one is bound")
