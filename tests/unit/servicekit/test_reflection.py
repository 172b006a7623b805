"""Server reflection on the public door describes only the public API: a real gRPC server
set up as every service is (``enable_reflection``), asked by file and by symbol."""

from __future__ import annotations

import asyncio

import grpc
from grpc_reflection.v1alpha import reflection_pb2 as rpb
from grpc_reflection.v1alpha import reflection_pb2_grpc

from president.gateway.v1 import gateway_pb2
from president.scoring.v1 import scoring_pb2
from president.servicekit.reflection import enable_reflection
from president.table.v1 import table_pb2

GATEWAY = gateway_pb2.DESCRIPTOR.services_by_name["GatewayService"].full_name


async def ask(requests: list[rpb.ServerReflectionRequest]) -> list[rpb.ServerReflectionResponse]:
    server = grpc.aio.server()
    enable_reflection(server, [GATEWAY])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            return [answer async for answer in stub.ServerReflectionInfo(iter(requests))]
    finally:
        await server.stop(None)


def found(answer: rpb.ServerReflectionResponse) -> bool:
    return answer.HasField("file_descriptor_response")


def test_the_gateway_describes_its_own_api_and_nothing_internal() -> None:
    internal_files = [table_pb2.DESCRIPTOR.name, scoring_pb2.DESCRIPTOR.name]
    internal_symbols = [
        table_pb2.DESCRIPTOR.services_by_name["TableService"].full_name,
        "president.table.v1.ExecuteCommandRequest",
        scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"].full_name,
    ]
    requests = [
        rpb.ServerReflectionRequest(list_services=""),
        rpb.ServerReflectionRequest(file_containing_symbol=GATEWAY),
        rpb.ServerReflectionRequest(file_by_filename=gateway_pb2.DESCRIPTOR.name),
        *(rpb.ServerReflectionRequest(file_by_filename=name) for name in internal_files),
        *(rpb.ServerReflectionRequest(file_containing_symbol=name) for name in internal_symbols),
    ]
    answers = asyncio.run(ask(requests))
    listed = {service.name for service in answers[0].list_services_response.service}
    assert GATEWAY in listed and not any("table" in name or "scoring" in name for name in listed)
    assert found(answers[1]) and found(answers[2])
    for request, answer in zip(requests[3:], answers[3:], strict=True):
        assert not found(answer), f"reflection described {request}"
        assert answer.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


def test_reflection_v1_answers_as_v1alpha_does() -> None:
    """The v1 method (same messages field for field as v1alpha) lists the services."""

    async def ask_v1() -> list[rpb.ServerReflectionResponse]:
        server = grpc.aio.server()
        enable_reflection(server, [GATEWAY])
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call = channel.stream_stream(
                    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
                    request_serializer=rpb.ServerReflectionRequest.SerializeToString,
                    response_deserializer=rpb.ServerReflectionResponse.FromString,
                )
                requests = [
                    rpb.ServerReflectionRequest(list_services=""),
                    rpb.ServerReflectionRequest(file_containing_symbol=f"{GATEWAY}.Play"),
                ]
                return [answer async for answer in call(iter(requests))]
        finally:
            await server.stop(None)

    listed, play = asyncio.run(ask_v1())
    names = {service.name for service in listed.list_services_response.service}
    assert {GATEWAY, "grpc.reflection.v1.ServerReflection"} <= names
    assert found(play)
