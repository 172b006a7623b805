"""Malformed protobuf bytes are INVALID_ARGUMENT (MALFORMED_REQUEST), not UNKNOWN naming a
Python class: a real gRPC server with the interceptor every service runs, sent raw bytes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc

from president.client.errors import GatewayError
from president.gateway.v1 import gateway_pb2 as pb
from president.gateway.v1 import gateway_pb2_grpc
from president.servicekit.malformed import MalformedRequests

SERVICE = "/president.gateway.v1.GatewayService"
BAD = b"\xff\xff\xff"


class Echo(gateway_pb2_grpc.GatewayServiceServicer):
    """Answers every well-formed request; counts what reached it."""

    def __init__(self) -> None:
        self.reached = 0

    async def GetTable(self, request: Any, context: Any) -> pb.GetTableResponse:
        self.reached += 1
        return pb.GetTableResponse()

    async def Watch(self, request: Any, context: Any) -> AsyncIterator[pb.WatchResponse]:
        self.reached += 1
        yield pb.WatchResponse()

    async def Session(self, requests: Any, context: Any) -> AsyncIterator[pb.SessionResponse]:
        async for _ in requests:
            self.reached += 1
            yield pb.SessionResponse()


async def refusals() -> tuple[list[GatewayError], int]:
    servicer = Echo()
    server = grpc.aio.server(interceptors=[MalformedRequests()])
    gateway_pb2_grpc.add_GatewayServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    errors: list[GatewayError] = []
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            good = pb.GetTableRequest().SerializeToString()
            assert await channel.unary_unary(f"{SERVICE}/GetTable")(good) is not None
            calls = [
                lambda: channel.unary_unary(f"{SERVICE}/GetTable")(BAD),
                lambda: _drain(channel.unary_stream(f"{SERVICE}/Watch")(BAD)),
                lambda: _drain(channel.stream_stream(f"{SERVICE}/Session")(iter([BAD]))),
            ]
            for call in calls:
                try:
                    await call()
                except grpc.aio.AioRpcError as error:
                    errors.append(GatewayError.of(error))
    finally:
        await server.stop(None)
    return errors, servicer.reached


async def _drain(call: Any) -> None:
    async for _ in call:
        pass


def test_malformed_bytes_are_invalid_argument_on_every_kind_of_method() -> None:
    errors, reached = asyncio.run(refusals())
    assert len(errors) == 3, "a malformed request was answered"
    for error in errors:
        assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_REQUEST")
        assert "class" not in error.message
    assert reached == 1, "a malformed request reached the servicer"
