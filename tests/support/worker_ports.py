"""Ports for the suite's servers that no other process is given, serial or under pytest-xdist.

Every worker process (and every service it starts, through the environment)
draws its ports from one machine-wide cursor over a range below the kernel's
ephemeral range (``president.servicekit.free_ports``): the kernel never gives
those ports to outgoing connections, and two workers are never handed the
same one. ``PRESIDENT_PORT_RANGE`` set beforehand is kept.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from president.servicekit.free_ports import RANGE_VARIABLE

EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
#: The lowest port the suite hands out.
FIRST = 20_000
#: Fewer ports than this below the ephemeral range: let the kernel pick.
ENOUGH = 2_000


def suite_port_range() -> str:
    """``FIRST-LAST`` below the ephemeral range, or "" when there is no room for it."""
    try:
        low = int(EPHEMERAL.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return ""
    return f"{FIRST}-{low - 1}" if low - FIRST >= ENOUGH else ""


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get(RANGE_VARIABLE):
        os.environ[RANGE_VARIABLE] = suite_port_range()
