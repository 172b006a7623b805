"""A quiet connection between two services survives its clients' keepalive pings: the servers
allow what the channels send (one :class:`Keepalive` for both ends). With gRPC's server
defaults (one ping in five minutes), a stream that stays quiet past a few pings failed
UNAVAILABLE "Too many pings" (GOAWAY ENHANCE_YOUR_CALM)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc

from president.client import gateway as client_gateway
from president.servicekit.channels import internal_channel_options
from president.servicekit.config import KEEPALIVE, Keepalive
from president.servicekit.server import server_options

#: Short pings for the test (gRPC's client sends at most one a second whatever is asked).
PINGS = Keepalive(ping_ms=500)
#: Long enough for several pings, and for a server that counts them as abuse to say so.
QUIET_SECONDS = 4.0


def _same(data: bytes) -> bytes:
    return data


async def _echo(request: bytes, _context: Any) -> bytes:
    return request


async def _quiet(_request: bytes, _context: Any) -> AsyncIterator[bytes]:
    yield b"first"
    await asyncio.sleep(QUIET_SECONDS)
    yield b"after the quiet"


async def test_a_quiet_stream_and_the_next_call_outlive_the_pings() -> None:
    server = grpc.aio.server(options=server_options(PINGS))
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "test.Quiet",
                {
                    "Echo": grpc.unary_unary_rpc_method_handler(_echo, _same, _same),
                    "Quiet": grpc.unary_stream_rpc_method_handler(_quiet, _same, _same),
                },
            )
        ]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(
        f"127.0.0.1:{port}", options=internal_channel_options(PINGS)
    )
    try:
        echo = channel.unary_unary("/test.Quiet/Echo")
        stream = channel.unary_stream("/test.Quiet/Quiet")(b"")
        assert await stream.read() == b"first"
        assert await stream.read() == b"after the quiet"  # pinged all along, never cut
        await asyncio.sleep(QUIET_SECONDS)  # no call open at all: pinged still
        assert await echo(b"still there", timeout=5) == b"still there"
        assert channel.get_state() == grpc.ChannelConnectivity.READY
    finally:
        await channel.close()
        await server.stop(None)


def test_the_servers_allow_the_pings_their_clients_send() -> None:
    client = dict(KEEPALIVE.client_options())
    server = dict(KEEPALIVE.server_options())
    assert (
        server["grpc.http2.min_ping_interval_without_data_ms"] <= client["grpc.keepalive_time_ms"]
    )
    assert server["grpc.keepalive_permit_without_calls"] == 1
    assert client["grpc.keepalive_permit_without_calls"] == 1


def test_the_servers_allow_the_pings_the_players_client_sends() -> None:
    """The Python client pings its gateway every few seconds (a cut connection is found
    fast): a gateway that took that for abuse would close it with too_many_pings."""
    server = dict(KEEPALIVE.server_options())
    assert server["grpc.http2.min_ping_interval_without_data_ms"] <= client_gateway.PING_MS
    assert KEEPALIVE.public_ping_ms == client_gateway.PING_MS
