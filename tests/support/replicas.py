"""Another gateway replica of a running stack: a second process on a port of its own."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from president.servicekit.launcher import Stack, free_port, wait_healthy


@contextmanager
def second_gateway(stack: Stack) -> Iterator[str]:
    """A second gateway of ``stack`` (same secret, same NATS, same services); its address."""
    port = free_port()
    env = {**stack.base_env(), "PRESIDENT_GATEWAY_PORT": str(port), "PRESIDENT_METRICS_PORT": "0"}
    log = (stack.workdir / f"gateway-{port}.log").open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "president.services.gateway.main"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    address = f"127.0.0.1:{port}"
    try:
        wait_healthy(address, 60, process)
        yield address
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
