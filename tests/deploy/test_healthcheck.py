"""The container health probe against real gRPC servers."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from president.servicekit.healthcheck import Probe, UsageError, check, main, parse_args
from president.servicekit.launcher import Stack, free_port

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@pytest.fixture(scope="module")
async def health_server() -> AsyncIterator[tuple[str, health.aio.HealthServicer]]:
    """A grpc.aio server with only the standard health service, on a free port."""
    server = grpc.aio.server()
    checker = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    await checker.set("", SERVING)
    await checker.set("president.test.v1.Up", SERVING)
    await checker.set("president.test.v1.Down", NOT_SERVING)
    try:
        yield f"127.0.0.1:{port}", checker
    finally:
        await server.stop(0)


async def probe(*argv: str) -> int:
    return await asyncio.to_thread(main, list(argv))


async def test_serving_server_exits_0(health_server, capsys) -> None:
    address, _ = health_server
    assert await probe(address) == 0
    assert capsys.readouterr().out.strip() == f"SERVING: {address} service=(server)"


async def test_serving_service_exits_0(health_server) -> None:
    address, _ = health_server
    assert await probe(address, "president.test.v1.Up") == 0


async def test_not_serving_service_exits_1(health_server, capsys) -> None:
    address, _ = health_server
    assert await probe(address, "president.test.v1.Down") == 1
    line = capsys.readouterr().err.strip()
    assert line.startswith("NOT_SERVING:") and "\n" not in line


async def test_unknown_service_exits_1(health_server, capsys) -> None:
    address, _ = health_server
    assert await probe(address, "president.test.v1.Nobody") == 1
    assert capsys.readouterr().err.startswith("UNKNOWN SERVICE:")


async def test_draining_server_exits_1(health_server) -> None:
    address, checker = health_server
    await checker.set("", NOT_SERVING)
    try:
        assert await probe(address) == 1
    finally:
        await checker.set("", SERVING)


async def test_nothing_listening_exits_1_quickly(capsys) -> None:
    address = f"127.0.0.1:{free_port()}"
    started = asyncio.get_running_loop().time()
    assert await probe(address, "--timeout", "2") == 1
    assert asyncio.get_running_loop().time() - started < 2.5
    assert capsys.readouterr().err.startswith("UNREACHABLE:")


async def test_server_without_health_service_exits_1(capsys) -> None:
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        assert await probe(f"127.0.0.1:{port}") == 1
    finally:
        await server.stop(0)
    assert capsys.readouterr().err.startswith("NO HEALTH SERVICE:")


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        ([], "usage:"),
        (["localhost"], "HOST:PORT"),
        (["localhost:http"], "HOST:PORT"),
        (["localhost:70000"], "HOST:PORT"),
        ([":50051"], "HOST:PORT"),
        (["a:1", "b", "c"], "usage:"),
        (["a:1", "--timeout"], "--timeout takes a number"),
        (["a:1", "--timeout", "soon"], "--timeout takes a number"),
        (["a:1", "--timeout=0"], "above 0"),
        (["a:1", "--verbose"], "unknown option"),
    ],
)
def test_bad_arguments_exit_1_with_a_sentence(argv, reason, capsys) -> None:
    with pytest.raises(UsageError, match=reason):
        parse_args(argv)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("healthcheck: ") and err.count("\n") == 1


def test_parse_args() -> None:
    assert parse_args(["table:50052"]) == Probe("table:50052")
    assert parse_args(["[::1]:5", "svc", "--timeout=1.5"]) == Probe("[::1]:5", "svc", 1.5)


async def test_module_entry_point(health_server) -> None:
    """The exact command the containers run: ``python -m president.servicekit.healthcheck``."""
    address, _ = health_server
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "president.servicekit.healthcheck",
        address,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 0, err
    assert out.decode().strip() == f"SERVING: {address} service=(server)"


def test_against_the_dealer_service(tmp_path: Path) -> None:
    """A real service started as its container starts it answers the probe, then not after."""
    stack = Stack(tmp_path, f"sqlite:///{tmp_path / 'events.db'}", "nats://127.0.0.1:1")
    stack.start(services=("dealer",))
    try:
        address = stack.address("dealer")
        assert check(Probe(address))[0]
        assert check(Probe(address, "president.dealer.v1.DealerService"))[0]
        command = [sys.executable, "-m", "president.servicekit.healthcheck", address]
        assert subprocess.run(command, check=False, capture_output=True, timeout=30).returncode == 0
        # What Prometheus scrapes from the same process.
        metrics_url = f"http://127.0.0.1:{stack.metrics_ports['dealer']}/metrics"
        with urllib.request.urlopen(metrics_url, timeout=10) as response:
            assert b"president_grpc_requests_total" in response.read()
    finally:
        stack.stop()
    serving, line = check(Probe(address, timeout=1))
    assert not serving and line.startswith("UNREACHABLE:")
