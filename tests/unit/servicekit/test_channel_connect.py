"""A call waits for a peer slow to answer its connection instead of failing at once (gRPC reads
``min_reconnect_backoff_ms`` as the time a connection attempt may take: at 100 ms calls to a
busy service on a loaded machine failed UNAVAILABLE), and a restarted peer is found quickly."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from president.client.gateway import channel as gateway_channel
from president.servicekit.channels import internal_channel_options
from president.servicekit.free_ports import free_port


@pytest.fixture
def silent_peer() -> Iterator[str]:
    """A port whose listener takes connections (the kernel's handshake) and never answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"127.0.0.1:{sock.getsockname()[1]}"


async def _check(channel: grpc.aio.Channel, timeout: float) -> grpc.StatusCode:
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        await stub.Check(health_pb2.HealthCheckRequest(), timeout=timeout)
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


@pytest.mark.parametrize("kind", ["internal", "gateway client"])
async def test_a_call_waits_for_a_peer_slow_to_answer(silent_peer: str, kind: str) -> None:
    if kind == "internal":
        channel = grpc.aio.insecure_channel(silent_peer, options=internal_channel_options())
    else:
        channel = gateway_channel(silent_peer)
    started = time.monotonic()
    try:
        code = await _check(channel, timeout=1.5)
    finally:
        await channel.close()
    assert code == grpc.StatusCode.DEADLINE_EXCEEDED  # waited: never UNAVAILABLE at 0.1 s
    assert time.monotonic() - started >= 1.4


async def test_a_peer_that_starts_late_is_reached_within_a_second() -> None:
    address = f"127.0.0.1:{free_port()}"
    channel = grpc.aio.insecure_channel(address, options=internal_channel_options())
    server = grpc.aio.server()
    try:
        assert await _check(channel, timeout=1) == grpc.StatusCode.UNAVAILABLE  # refused
        health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
        server.add_insecure_port(address)
        await server.start()
        await asyncio.sleep(1.2)  # the longest reconnect backoff (1 s) has passed
        started = time.monotonic()
        assert await _check(channel, timeout=5) == grpc.StatusCode.OK
        assert time.monotonic() - started < 1.0
    finally:
        await channel.close()
        await server.stop(None)
