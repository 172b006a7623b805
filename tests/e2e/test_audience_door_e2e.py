"""The spectators' HTTP door of an audience replica, end to end, read by connectrpc's own
client (binary and JSON) and by raw sockets.

Every change a spectator gets there (the same bytes for all of them) is
checked against the stored log: no card of any seat, no secret before its
reveal. A resume gives no gap and no duplicate (from long past: the view
now, marked skipped); spectators whose sockets are never read hold no seat
back and skip to the newest view when read at last; refusals come as
Connect errors with the status, the stable reason and a sentence; a logout
ends an open stream; the door's spectators go on after the audience replica
and NATS restart.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
import httpx
import pytest

from president.client import GatewayClient, GatewayError, play_seat, watch_at_door
from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.launcher import NatsServer, Stack
from tests.support.audiences import (
    GAME_SECONDS,
    PAGE_ORIGIN,
    REPLAY_LIMIT,
    ROUNDS,
    check_resumes,
    check_watched,
    practice,
    spectator,
    until_over,
    watch_through_restarts,
)
from tests.support.gateway_truth import Store

WATCH = "/president.gateway.v1.GatewayService/Watch"


def _door(stack: Stack) -> str:
    return stack.door("audience")


async def _refusal(changes: AsyncIterator[pb.WatchResponse]) -> GatewayError:
    with pytest.raises(GatewayError) as refused:
        async for _change in changes:
            pass
    return refused.value


# --------------------------------------------------------------------------- what it shows
@pytest.mark.parametrize("as_json", [False, True], ids=["proto", "json"])
async def test_the_door_shows_a_whole_game_as_the_replicas_grpc_watch_does(
    audience_stack: Stack, audience_store: Store, as_json: bool
) -> None:
    """A game watched from its start at the door (binary or JSON, as a browser reads it) and
    on the replica's gRPC Watch: the same changes apart from the server's clock, every
    version once and in order, none with a card of any seat."""
    host = await practice(audience_stack)
    table_id = host.table_id
    fan = await spectator(audience_stack.address("audience"), table_id)
    try:
        at_door, at_grpc, log = await asyncio.wait_for(
            asyncio.gather(
                until_over(
                    watch_at_door(_door(audience_stack), fan.token, table_id, 1, json=as_json)
                ),
                until_over(fan.watch(1)),
                play_seat(host, host_rounds=ROUNDS),
            ),
            GAME_SECONDS,
        )
        assert log.last_view is not None and log.last_view.phase == "game_over"
        truth = audience_store.truth(table_id)
        check_watched(at_door, truth, 1)
        assert at_door[-1].view.phase == "game_over"
        by_version = {c.version: c for c in at_grpc if not c.snapshot}
        shared = [c for c in at_door if c.version in by_version and not c.snapshot]
        assert len(shared) > 50
        for change in shared:
            other = by_version[change.version]
            for made in (change, other):
                made.view.ClearField("server_now_unix_ms")
            assert change == other
    finally:
        await host.close()
        await fan.close()


async def test_a_resumed_spectator_at_the_door_gets_no_gap_and_no_duplicate(
    audience_stack: Stack, audience_store: Store
) -> None:
    """From a recent version: every change after it, once; from long past (version 1): the
    view now marked skipped, then every change."""
    host = await practice(audience_stack)
    fan = await spectator(audience_stack.address("audience"), host.table_id)
    door = _door(audience_stack)
    try:
        # Well inside the replay: versions keep coming until the door's stream opens.
        await check_resumes(
            audience_store,
            host,
            lambda version: watch_at_door(door, fan.token, host.table_id, version),
            REPLAY_LIMIT // 8,
        )
    finally:
        await host.close()
        await fan.close()


# --------------------------------------------------------------------------- slow readers
class _Unread:
    """A spectator's socket at the door that is not read until :meth:`changes`."""

    def __init__(self, door: str, token: str, table_id: str) -> None:
        host, port = door.rsplit(":", 1)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 * 1024)  # a slow phone's
        self.sock.connect((host, int(port)))
        body = pb.WatchRequest(table_id=table_id).SerializeToString()
        self.sock.sendall(
            f"POST {WATCH} HTTP/1.1\r\nhost: door\r\ncontent-type: application/connect+proto\r\n"
            f"authorization: Bearer {token}\r\ncontent-length: {len(body) + 5}\r\n\r\n".encode()
            + struct.pack(">BI", 0, len(body))
            + body
        )

    def changes(self, until_version: int) -> list[pb.WatchResponse]:
        """Read at last: every message up to ``until_version`` (blocking, with a timeout)."""
        self.sock.settimeout(20)
        stream = self.sock.makefile("rb")
        while stream.readline() not in (b"\r\n", b""):
            pass  # the response head
        out: list[pb.WatchResponse] = []
        while not out or out[-1].version < until_version:
            size = int(stream.readline().strip(), 16)
            data = stream.read(size + 2)[:size]
            at = 0
            while at < size:
                flags, length = struct.unpack_from(">BI", data, at)
                assert not flags & 0x02, data[at + 5 : at + 5 + length]
                out.append(pb.WatchResponse.FromString(data[at + 5 : at + 5 + length]))
                at += 5 + length
        return out

    def close(self) -> None:
        self.sock.close()


async def test_spectators_whose_sockets_are_never_read_hold_no_seat_back_and_skip_ahead(
    audience_stack: Stack, audience_store: Store
) -> None:
    """Five spectators open streams at the door and read nothing while the whole game is
    played: the seats play it all (nobody waits for them); read at last, each stream has
    its snapshot, what fitted in its buffers, then the newest view marked skipped, and no
    card of any seat; the game had many times more bytes than the buffers hold."""
    host = await practice(audience_stack)
    table_id = host.table_id
    fan = await spectator(audience_stack.address("audience"), table_id)
    stuck = [_Unread(_door(audience_stack), fan.token, table_id) for _ in range(5)]
    try:
        log = await asyncio.wait_for(play_seat(host, host_rounds=ROUNDS), GAME_SECONDS)
        assert log.last_view is not None and log.last_view.phase == "game_over"
        final = audience_store.version(table_id)
        streams = [await asyncio.to_thread(unread.changes, final) for unread in stuck]
        truth = audience_store.truth(table_id)
        for got in streams:
            assert got[0].snapshot and not got[0].skipped
            check_watched(got, truth, got[0].version)
            assert any(c.skipped for c in got), "a stream never read got every change"
            assert len(got) < final - got[0].version
            assert got[-1].version >= final
    finally:
        for unread in stuck:
            unread.close()
        await host.close()
        await fan.close()


# --------------------------------------------------------------------------- refusals
async def test_the_door_refuses_with_a_code_a_reason_and_a_sentence(
    audience_stack: Stack,
) -> None:
    """A bad token, a seat holder, a malformed table id, a table nobody made, a version
    not there yet: each a Connect error with its status, its stable reason and a sentence;
    a wrong media type or path, or a page of another origin, is refused before any stream."""
    host = await practice(audience_stack)
    fan = await spectator(audience_stack.address("audience"), host.table_id)
    door = _door(audience_stack)
    try:
        cases = [
            ("junk", host.table_id, 0, grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID"),
            (host.token, host.table_id, 0, grpc.StatusCode.FAILED_PRECONDITION, "SEAT_HOLDER"),
            (fan.token, "no tables here!", 0, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_TABLE_ID"),
            (fan.token, "nobodysmade", 0, grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"),
            (fan.token, host.table_id, 10**6, grpc.StatusCode.OUT_OF_RANGE, "VERSION_AHEAD"),
        ]
        for token, table_id, version, code, reason in cases:
            error = await _refusal(watch_at_door(door, token, table_id, version))
            assert (error.code, error.reason) == (code, reason), error
            assert len(error.message) > 10, error
        async with httpx.AsyncClient(base_url=f"http://{door}") as http:
            body = b"\x00\x00\x00\x00\x03abc"  # an envelope of 3 bytes that are no message
            answer = await http.post(
                WATCH,
                content=body,
                headers={"content-type": "application/connect+proto"},
            )
            assert answer.status_code == 200  # Connect: the error is the stream's end
            end = answer.content[5:]
            assert answer.content[0] == 0x02
            error = json.loads(end)["error"]
            assert error["code"] == "invalid_argument" and "could not be read" in error["message"]
            detail = error["details"][0]
            assert detail["type"] == "google.rpc.ErrorInfo"
            assert b"MALFORMED_REQUEST" in base64.b64decode(detail["value"] + "==")
            wrong_type = await http.post(
                WATCH, content=b"{}", headers={"content-type": "text/plain"}
            )
            assert wrong_type.status_code == 415 and "connect+proto" in wrong_type.text
            assert (await http.post("/elsewhere", content=b"")).status_code == 404
            other_page = await http.post(
                WATCH,
                content=b"",
                headers={
                    "content-type": "application/connect+json",
                    "origin": "https://evil.example",
                },
            )
            assert other_page.status_code == 403 and "evil.example" in other_page.text
            preflight = await http.options(
                WATCH,
                headers={"origin": PAGE_ORIGIN, "access-control-request-method": "POST"},
            )
            assert preflight.status_code == 204
            assert preflight.headers["access-control-allow-origin"] == PAGE_ORIGIN
            assert "authorization" in preflight.headers["access-control-allow-headers"]
    finally:
        await host.close()
        await fan.close()


async def _stream_ended_by(
    stack: Stack, host: GatewayClient, act: Callable[[GatewayClient], Awaitable[object]]
) -> GatewayError:
    """A spectator's stream at the door, opened, then ``act`` done by the spectator: the
    refusal that ended the stream (within the door's next re-check)."""
    fan = GatewayClient.connect(stack.gateway)
    try:
        token = await fan.spectate(host.table_id)
        changes = watch_at_door(_door(stack), token, host.table_id)
        assert (await asyncio.wait_for(anext(changes), 10)).snapshot
        await act(fan)
        return await asyncio.wait_for(_refusal(changes), 10)
    finally:
        await fan.close()


async def test_an_open_stream_at_the_door_ends_when_its_session_logs_out(
    audience_stack: Stack,
) -> None:
    host = await practice(audience_stack)
    try:
        error = await _stream_ended_by(audience_stack, host, lambda fan: fan.log_out())
        assert (error.code, error.reason) == (grpc.StatusCode.UNAUTHENTICATED, "SESSION_REVOKED")
    finally:
        await host.close()


async def test_a_spectator_who_sits_down_is_sent_to_the_players_gateway(
    audience_stack: Stack,
) -> None:
    """Watching at the door, the spectator takes a free seat (at the players' gateway): its
    door stream ends with SEAT_HOLDER within the next re-check, so its page watches its
    hand where it is shown."""
    host = GatewayClient.connect(audience_stack.gateway)
    try:
        await host.create_table("house", display_name="Host", visibility="public")
        error = await _stream_ended_by(
            audience_stack, host, lambda fan: fan.join(host.table_id, "Fan")
        )
        assert (error.code, error.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SEAT_HOLDER")
    finally:
        await host.close()


async def test_odd_requests_get_an_answer_and_leave_the_door_serving(
    audience_stack: Stack,
) -> None:
    """HEAD gets its head alone, HTTP/1.0 a sentence to speak HTTP/1.1 (a stream goes in
    chunks), and the door goes on serving."""
    host, port = _door(audience_stack).rsplit(":", 1)

    async def exchange(raw: bytes, wait: float = 5) -> bytes:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(raw)
        try:
            return await asyncio.wait_for(reader.read(), wait)  # to the close
        finally:
            writer.close()

    head = await exchange(b"HEAD /healthz HTTP/1.1\r\nhost: d\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and head.endswith(b"\r\n\r\n"), head  # no body
    old = await exchange(b"POST " + WATCH.encode() + b" HTTP/1.0\r\ncontent-length: 0\r\n\r\n")
    assert old.startswith(b"HTTP/1.1 505") and b"HTTP/1.1" in old.split(b"\r\n\r\n", 1)[1]
    async with httpx.AsyncClient(base_url=f"http://{_door(audience_stack)}") as http:
        assert (await http.get("/healthz")).text == "ok"


# --------------------------------------------------------------------------- restarts
async def test_the_doors_spectators_go_on_when_the_audience_replica_and_nats_restart(
    audience_stack: Stack, audience_store: Store, audience_nats: NatsServer
) -> None:
    """The audience replica is stopped (its streams end: SERVER_DRAINING) and started again,
    then NATS is: a spectator at the door resumes from its last version each time and sees
    the game to its end, no gap, no duplicate, no leak."""
    host = await practice(audience_stack)
    fan = await spectator(audience_stack.address("audience"), host.table_id)
    door = _door(audience_stack)
    try:
        watched = await watch_through_restarts(
            audience_stack,
            audience_store,
            audience_nats,
            host,
            lambda version: watch_at_door(door, fan.token, host.table_id, version),
        )
        # The replica's stop ended the stream (told SERVER_DRAINING, or cut off behind
        # unsent bytes), and it resumed.
        assert watched.ends and set(watched.ends) <= {"SERVER_DRAINING", ""}, watched.ends
    finally:
        await host.close()
        await fan.close()
