"""Quiet connections on the real stack outlive their keepalive pings: every service's
process, its channels pinging every second (``PRESIDENT_GRPC_PING_MS``), a player's table
watched natively and through the web edge while nothing happens for several pings, then
called again.

With a server that permits fewer pings than its clients send (gRPC's default, one in
five minutes, before ``Keepalive``), a client's third ping in a quiet spell is answered
GOAWAY ENHANCE_YOUR_CALM ``too_many_pings``: the calls open on that connection fail
UNAVAILABLE (the edge's Watch, a player's page losing its stream), and the client logs
the GOAWAY. ``tests/unit/servicekit/test_keepalive.py`` checks the same options on a
generic server; this checks that every process of the stack is built with them.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from president.client import GatewayClient
from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.launcher import ALL_SERVICES, Stack
from tests.support.servers import isolated_env, sqlite_stack_in
from tests.support.web_edge import END_STREAM, SERVICE_PATH, end_of_stream_error, envelope

#: The services' pings: one a second, as often as gRPC sends them.
PING_MS = 1_000
#: Quiet for this long: six pings, double what a strict server needs to send GOAWAY.
QUIET_SECONDS = 6.0
#: What a log says when a server took its client's pings for abuse.
TOO_MANY_PINGS = ("too_many_pings", "GOAWAY", "ENHANCE_YOUR_CALM")


@pytest.fixture(scope="module")
def pinging_stack(tmp_path_factory: pytest.TempPathFactory, nats_url: str) -> Iterator[Stack]:
    """The six services and the web edge, every channel pinging every second."""
    workdir = tmp_path_factory.mktemp("keepalive")
    env = {**isolated_env(), "PRESIDENT_GRPC_PING_MS": str(PING_MS)}
    with sqlite_stack_in(workdir, nats_url, env, ALL_SERVICES) as stack:
        yield stack


async def _edge_changes(response: httpx.Response) -> AsyncIterator[pb.WatchResponse]:
    """The changes of a Connect Watch stream (binary), as they arrive."""
    buffer = b""
    async for chunk in response.aiter_bytes():
        buffer += chunk
        while len(buffer) >= 5 and len(buffer) >= 5 + struct.unpack_from(">I", buffer, 1)[0]:
            size = 5 + struct.unpack_from(">I", buffer, 1)[0]
            flags, payload = buffer[0], buffer[5:size]
            buffer = buffer[size:]
            assert not flags & END_STREAM, end_of_stream_error(payload)  # cut: UNAVAILABLE
            yield pb.WatchResponse.FromString(payload)


async def _past_the_lobby(changes: AsyncIterator[pb.WatchResponse]) -> pb.WatchResponse:
    """The first change of ``changes`` after the game started (a change read before the
    quiet, buffered, would not show that the stream outlived it)."""
    async for change in changes:
        if change.view.phase != "lobby":
            return change
    raise AssertionError("the stream ended")


async def test_quiet_streams_and_calls_outlive_the_pings(pinging_stack: Stack) -> None:
    stack = pinging_stack
    edge = httpx.AsyncClient(base_url=f"http://{stack.address('web')}", timeout=30)
    async with GatewayClient.connect(stack.gateway) as player, edge:
        await player.create_table("classic", options={"game_end": "rounds:1"}, display_name="Ada")
        native = player.watch()
        lobby = await anext(native)
        body = envelope(pb.WatchRequest(table_id=player.table_id).SerializeToString())
        headers = {
            "content-type": "application/connect+proto",
            "authorization": f"Bearer {player.token}",
        }
        async with edge.stream(
            "POST", f"{SERVICE_PATH}/Watch", content=body, headers=headers
        ) as got:
            assert got.status_code == 200
            through_edge = _edge_changes(got)
            assert (await anext(through_edge)).view.phase == "lobby"

            await asyncio.sleep(QUIET_SECONDS)  # nothing on any connection but pings

            # Calls after the quiet: natively, and through the edge in Connect JSON.
            assert (await player.get_table()).phase == "lobby"
            answer = await edge.post(
                f"{SERVICE_PATH}/GetTable",
                json={"tableId": player.table_id},
                headers={"authorization": f"Bearer {player.token}"},
            )
            assert answer.status_code == 200, answer.text
            # The streams open all along still carry the changes made after the quiet.
            await player.start()
            started = await asyncio.wait_for(_past_the_lobby(native), 10)
            assert started.version > lobby.version
            edge_started = await asyncio.wait_for(_past_the_lobby(through_edge), 10)
            assert edge_started.version == started.version
        await native.aclose()
    logs = {name: stack.log(name) for name in stack.processes}
    assert set(logs) >= set(ALL_SERVICES)
    said = {
        name: [line for line in log.splitlines() if any(w in line for w in TOO_MANY_PINGS)]
        for name, log in logs.items()
    }
    assert not any(said.values()), said
