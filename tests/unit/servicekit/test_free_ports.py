"""free_port never hands one port to two processes: under pytest-xdist every worker starts
servers on ports it was handed, and a port is free only until its server binds it."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from president.servicekit.free_ports import RANGE_VARIABLE, bindable, free_port, port_range
from tests.support.worker_ports import EPHEMERAL

DRAW = """
import json, sys
from president.servicekit.free_ports import free_port
sys.stdin.readline()  # every process draws at once
print(json.dumps([free_port() for _ in range({count})]))
"""


@pytest.fixture
def block(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, int]]:
    """A range of 100 ports of this test's own (its cursor file removed afterwards)."""
    first = random.randrange(10_000, 19_900, 100)
    last = first + 99
    monkeypatch.setenv(RANGE_VARIABLE, f"{first}-{last}")
    yield first, last
    (Path(tempfile.gettempdir()) / f"president-ports-{first}-{last}").unlink(missing_ok=True)


def _listening(stack: ExitStack, port: int) -> None:
    sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    sock.bind(("127.0.0.1", port))
    sock.listen()


def test_processes_drawing_at_once_never_get_one_port(block: tuple[int, int]) -> None:
    first, last = block
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", DRAW.format(count=25)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    drawn: list[int] = []
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    for process in processes:
        out, _ = process.communicate(timeout=60)
        assert process.returncode == 0
        drawn.extend(json.loads(out))
    assert len(drawn) == 100
    assert sorted(drawn) == list(range(first, last + 1))  # each port once, none outside


def test_a_port_something_is_bound_to_is_skipped(block: tuple[int, int]) -> None:
    first, last = block
    with ExitStack() as stack:
        for port in range(first, last + 1):
            if port != first + 42:
                _listening(stack, port)
        assert free_port() == first + 42
        assert free_port() == first + 42  # the only one: it comes round again
        assert not bindable(first)


def test_a_range_with_every_port_bound_is_a_clear_error(block: tuple[int, int]) -> None:
    first, last = block
    with ExitStack() as stack:
        for port in range(first, last + 1):
            _listening(stack, port)
        with pytest.raises(RuntimeError, match=f"no free port in {RANGE_VARIABLE} {first}-{last}"):
            free_port()


@pytest.mark.parametrize("text", ["20000", "a-b", "30000-20000", "80-90", "60000-70000"])
def test_a_bad_range_is_refused_with_what_it_must_be(text: str) -> None:
    with pytest.raises(ValueError, match="is FIRST-LAST, two ports from 1024 to 65535 in order"):
        port_range(text)


def test_without_a_range_the_kernel_picks_and_no_port_comes_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(RANGE_VARIABLE)
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50 and all(bindable(port) for port in ports)


def test_the_suite_draws_below_the_kernels_ephemeral_range() -> None:
    low = int(EPHEMERAL.read_text().split()[0])
    span = port_range(os.environ[RANGE_VARIABLE])
    assert span is not None and span[1] < low
