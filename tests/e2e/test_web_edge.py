"""Through the web edge with a real HTTP client, as a browser speaks to it.

The five services and the web edge run as processes (SQLite, NATS). httpx
speaks Connect (JSON and binary, unary and the Watch stream) and gRPC-Web to
the edge; the native Python client talks to the gateway beside it, and the
two must get the same answers: the same views and redaction, the same
refusals (status, reason and sentence). Refused input changes nothing.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.parse
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import httpx
import pytest
from google.rpc import error_details_pb2, status_pb2

from president import codec
from president.client import GatewayClient, GatewayError
from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.launcher import Stack, free_port
from tests.support.web_edge import (
    ALLOWED_ORIGIN,
    END_STREAM,
    GRPC_WEB_TRAILER,
    SERVICE_PATH,
    base_url,
    end_of_stream_error,
    envelope,
    envelopes,
    error_reason,
    web_stack,  # noqa: F401  # the fixture
)

ROUND_STARTED = codec.type_name(epb.RoundStarted)
JSON = {"content-type": "application/json"}
PROTO = {"content-type": "application/proto"}


@pytest.fixture
async def http(web_stack: Stack) -> AsyncIterator[httpx.AsyncClient]:  # noqa: F811
    async with httpx.AsyncClient(base_url=base_url(web_stack), timeout=30) as client:
        yield client


@pytest.fixture
async def native(web_stack: Stack) -> AsyncIterator[GatewayClient]:  # noqa: F811
    async with GatewayClient.connect(web_stack.gateway) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def unary(
    http: httpx.AsyncClient, method: str, body: dict[str, object], **headers: str
) -> httpx.Response:
    return await http.post(f"{SERVICE_PATH}/{method}", json=body, headers={**JSON, **headers})


async def edge_guest(http: httpx.AsyncClient, name: str) -> str:
    """A new guest's access token, from CreateGuest through the edge (no token needed)."""
    created = await unary(http, "CreateGuest", {"displayName": name})
    assert created.status_code == 200, created.text
    token: str = created.json()["credentials"]["accessToken"]
    assert token
    return token


def unclocked(view: gpb.TableView) -> gpb.TableView:
    """``view`` without ``server_now_unix_ms``: the server's clock when it built the view,
    which differs between two calls by the milliseconds between them."""
    out = gpb.TableView()
    out.CopyFrom(view)
    out.ClearField("server_now_unix_ms")
    return out


def unpresent(view: gpb.TableView) -> gpb.TableView:
    """:func:`unclocked` ``view`` without what a stream's own opening changes: the version
    and the seats' ``connected`` (a Watch opening is a presence report, one more event)."""
    out = unclocked(view)
    out.ClearField("version")
    for seat in out.seats:
        seat.ClearField("connected")
    return out


def unclocked_change(change: pb.WatchResponse) -> pb.WatchResponse:
    out = pb.WatchResponse()
    out.CopyFrom(change)
    out.view.CopyFrom(unclocked(change.view))
    return out


async def native_refusal(call: object) -> GatewayError:
    with pytest.raises(GatewayError) as raised:
        await call  # type: ignore[misc]
    return raised.value


async def edge_watch(
    http: httpx.AsyncClient,
    token: str,
    table_id: str,
    versions: dict[int, pb.WatchResponse],
    until: int,
) -> None:
    """Read a Connect Watch stream (binary) of ``table_id`` into ``versions`` until
    ``until`` events of RoundStarted were seen."""
    seen = 0
    buffer = b""
    headers = {"content-type": "application/connect+proto", **bearer(token)}
    body = envelope(pb.WatchRequest(table_id=table_id).SerializeToString())
    async with http.stream("POST", f"{SERVICE_PATH}/Watch", content=body, headers=headers) as got:
        assert got.status_code == 200
        async for chunk in got.aiter_bytes():
            buffer += chunk
            while len(buffer) >= 5 and len(buffer) >= 5 + int.from_bytes(buffer[1:5], "big"):
                size = 5 + int.from_bytes(buffer[1:5], "big")
                ((flags, payload),) = envelopes(buffer[:size])
                buffer = buffer[size:]
                assert not flags & END_STREAM, end_of_stream_error(payload)
                change = pb.WatchResponse.FromString(payload)
                versions[change.version] = change
                seen += change.event.type == ROUND_STARTED
                if seen >= until:
                    return


async def native_watch(
    client: GatewayClient, versions: dict[int, pb.WatchResponse], until: int
) -> None:
    seen = 0
    async for change in client.watch():
        versions[change.version] = change
        seen += change.event.type == ROUND_STARTED
        if seen >= until:
            return


# --------------------------------------------------------------------------- calls
async def test_unary_calls_in_connect_json_binary_and_grpc_web(
    http: httpx.AsyncClient, native: GatewayClient
) -> None:
    token = await edge_guest(http, "Ann")  # an account call, through the edge
    created = await unary(
        http,
        "CreateTable",
        {
            "options": {"preset": "classic"},
            "visibility": "VISIBILITY_PUBLIC",
            "displayName": "Ann",
            "commandId": uuid.uuid4().hex,
        },
        **bearer(token),
    )
    assert created.status_code == 200, created.text
    table_id = created.json()["tableId"]
    assert "token" not in created.json()  # a token names an account, not a table

    listed = await http.post(
        f"{SERVICE_PATH}/ListTables",
        content=pb.ListTablesRequest().SerializeToString(),
        headers=PROTO,
    )
    assert listed.headers["content-type"] == "application/proto"
    assert table_id in {t.table_id for t in pb.ListTablesResponse.FromString(listed.content).tables}

    # gRPC-Web, as a grpc-web client in a browser frames it: data frame, then trailers.
    framed = await http.post(
        f"{SERVICE_PATH}/GetTable",
        content=envelope(pb.GetTableRequest(table_id=table_id).SerializeToString()),
        headers={"content-type": "application/grpc-web+proto", "x-grpc-web": "1", **bearer(token)},
    )
    frames = envelopes(framed.content)
    assert [flags for flags, _ in frames] == [0, GRPC_WEB_TRAILER]
    assert b"grpc-status: 0" in frames[1][1] or b"grpc-status:0" in frames[1][1]
    view = pb.GetTableResponse.FromString(frames[0][1]).view
    seat = native.sibling(token=token, table_id=table_id)
    # The same view as the native call, field for field (but the server's clock).
    assert unclocked(view) == unclocked(await seat.get_table())


async def test_a_connect_json_refusal_is_readable_without_protobuf(
    http: httpx.AsyncClient,
) -> None:
    """Each ErrorInfo comes with ``debug``: its reason, domain and metadata as JSON, beside
    the base64 ``value`` (the gateway's refusals forwarded, and the edge's own)."""
    token = await edge_guest(http, "Reader")
    missing = {"tableId": "no-such-table", "displayName": "Reader"}
    refused = await unary(http, "JoinTable", missing, **bearer(token))
    assert refused.status_code == 404, refused.text
    (detail,) = refused.json()["details"]
    assert detail["debug"] == {"reason": "TABLE_NOT_FOUND", "domain": "president.cards"}
    assert error_reason(refused.json()) == "TABLE_NOT_FOUND"
    unknown = await http.post(f"{SERVICE_PATH}/NoSuchMethod", content=b"{}", headers=JSON)
    assert unknown.json()["details"][0]["debug"]["reason"] == "UNKNOWN_METHOD"


async def test_the_account_calls_go_through_the_edge(http: httpx.AsyncClient) -> None:
    """CreateGuest, LogIn and Refresh need no token; WhoAmI names the bearer's account."""
    created = await unary(http, "CreateGuest", {"displayName": "Jo"})
    assert created.status_code == 200, created.text
    guest = created.json()["credentials"]
    account = guest["identity"]["accountId"]
    logged_in = await unary(
        http, "LogIn", {"guestId": account, "deviceSecret": guest["deviceSecret"]}
    )
    assert logged_in.status_code == 200, logged_in.text
    session = logged_in.json()["credentials"]
    assert session["identity"]["accountId"] == account
    refreshed = await unary(http, "Refresh", {"refreshToken": session["refreshToken"]})
    assert refreshed.status_code == 200, refreshed.text
    access = refreshed.json()["credentials"]["accessToken"]
    who = await unary(http, "WhoAmI", {}, **bearer(access))
    assert who.status_code == 200, who.text
    assert who.json()["identity"]["accountId"] == account
    assert who.json()["identity"]["displayName"] == "Jo"
    # A refresh token is used once: the second use is the gateway's refusal.
    again = await unary(http, "Refresh", {"refreshToken": session["refreshToken"]})
    assert again.status_code == 401 and again.json()["code"] == "unauthenticated"
    anonymous = await unary(http, "WhoAmI", {})
    assert anonymous.status_code == 401
    assert error_reason(anonymous.json()) == "TOKEN_MISSING"


async def test_a_forged_token_gets_the_native_refusal_and_changes_nothing(
    http: httpx.AsyncClient, native: GatewayClient
) -> None:
    await native.create_table("classic", visibility="practice", display_name="Bo")
    before = await native.get_table()
    forged = native.token[:-4] + ("AAAA" if not native.token.endswith("AAAA") else "BBBB")
    expected = await native_refusal(native.sibling(token=forged).get_table())
    for method in ("GetTable", "StartGame", "Play"):
        got = await unary(
            http, method, {"cards": ["3C"]} if method == "Play" else {}, **bearer(forged)
        )
        assert got.status_code == 401
        error = got.json()
        assert error["code"] == "unauthenticated"
        assert error["message"] == expected.message
        assert error_reason(error) == expected.reason == "TOKEN_INVALID"
    assert (await native.get_table()).version == before.version


async def test_a_refused_play_is_refused_alike_and_changes_nothing(
    http: httpx.AsyncClient, native: GatewayClient
) -> None:
    await native.create_table("classic", visibility="practice", display_name="Cy")
    before = await native.get_table()
    expected = await native_refusal(native.play(["XX"]))
    body = {"cards": ["XX"], "tableId": native.table_id}
    got = await unary(http, "Play", body, **bearer(native.token))
    assert got.status_code == 400
    assert got.json()["code"] == "invalid_argument"
    assert got.json()["message"] == expected.message
    assert error_reason(got.json()) == expected.reason
    assert expected.code == grpc.StatusCode.INVALID_ARGUMENT
    assert (await native.get_table()).version == before.version


async def test_a_disallowed_origin_is_refused_before_the_gateway(
    http: httpx.AsyncClient, native: GatewayClient
) -> None:
    await native.create_guest("Eve")
    lobby = {t.table_id for t in await native.list_tables(page_size=100)}
    command_id = uuid.uuid4().hex
    body = {
        "options": {"preset": "classic"},
        "visibility": "VISIBILITY_PUBLIC",
        "displayName": "Eve",
        "commandId": command_id,
    }
    # A call the gateway would take (a valid token), but from a page of another site.
    refused = await unary(
        http, "CreateTable", body, origin="http://evil.example", **bearer(native.token)
    )
    assert refused.status_code == 403
    assert refused.json()["code"] == "permission_denied"
    assert error_reason(refused.json()) == "ORIGIN_NOT_ALLOWED"
    assert "access-control-allow-origin" not in refused.headers
    preflight = await http.options(
        f"{SERVICE_PATH}/CreateTable",
        headers={"origin": "http://evil.example", "access-control-request-method": "POST"},
    )
    assert preflight.status_code == 403
    # Nothing was created: the lobby has no new table, and the same command id still
    # creates a new table natively.
    assert {t.table_id for t in await native.list_tables(page_size=100)} == lobby
    created = await native.create_table(
        "classic", visibility="public", display_name="Eve", command_id=command_id
    )
    assert created.table_id and created.table_id not in lobby

    # The configured origin gets CORS answers, its preflight included.
    preflight = await http.options(
        f"{SERVICE_PATH}/ListTables",
        headers={
            "origin": ALLOWED_ORIGIN,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization, content-type",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == ALLOWED_ORIGIN
    allowed = await unary(http, "ListTables", {}, origin=ALLOWED_ORIGIN)
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == ALLOWED_ORIGIN


async def test_malformed_and_huge_messages_are_refused_and_change_nothing(
    http: httpx.AsyncClient, native: GatewayClient
) -> None:
    path = f"{SERVICE_PATH}/CreateTable"
    bad_json = await http.post(path, content=b'{"displayName": ', headers=JSON)
    assert bad_json.status_code == 400 and bad_json.json()["code"] == "invalid_argument"
    bad_proto = await http.post(path, content=b"\xff\xff\xff\xff", headers=PROTO)
    assert bad_proto.status_code == 400 and bad_proto.json()["code"] == "invalid_argument"
    unknown = await http.post(f"{SERVICE_PATH}/NoSuchMethod", json={}, headers=JSON)
    assert unknown.status_code == 404
    bidi = await http.post(f"{SERVICE_PATH}/Session", json={}, headers=JSON)
    assert bidi.status_code == 404  # Session is native gRPC only

    await native.create_guest("Di")
    lobby = {t.table_id for t in await native.list_tables(page_size=100)}
    command_id = uuid.uuid4().hex
    huge = {
        "displayName": "x" * (1 << 20),
        "visibility": "VISIBILITY_PUBLIC",
        "commandId": command_id,
    }
    refused = await unary(http, "CreateTable", huge, **bearer(native.token))
    assert refused.json()["code"] == "resource_exhausted"
    assert "larger than" in refused.json()["message"]
    with pytest.raises(grpc.aio.AioRpcError) as native_huge:
        await native.stub.CreateTable(
            pb.CreateTableRequest(
                display_name="x" * (1 << 20),
                visibility=pb.VISIBILITY_PUBLIC,
                command_id=command_id,
            ),
            metadata=native.metadata(),
        )
    assert native_huge.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # the same refusal
    assert {t.table_id for t in await native.list_tables(page_size=100)} == lobby
    created = await native.create_table(
        "classic", visibility="public", display_name="Di", command_id=command_id
    )
    assert created.table_id not in lobby  # the huge calls created nothing under its id


async def test_every_answer_carries_the_security_headers(http: httpx.AsyncClient) -> None:
    for answer in (
        await http.get("/"),
        await http.get("/lib/deal.js"),
        await unary(http, "ListTables", {}),
        await http.get("/no-such-file"),
    ):
        csp = answer.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert "frame-ancestors 'none'" in csp
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
        assert answer.headers["x-frame-options"] == "DENY"
    page = await http.get("/")
    assert page.status_code == 200 and "<script" in page.text and "src=" in page.text
    assert (await http.get("/lib/deal.js")).headers["content-type"].startswith("text/javascript")


async def test_probes(http: httpx.AsyncClient) -> None:
    assert (await http.get("/healthz")).text == "ok"
    assert (await http.get("/readyz")).status_code == 200


# --------------------------------------------------------------------------- the Watch stream
@pytest.mark.parametrize(
    "path",
    [
        f"{SERVICE_PATH}/NoSuchMethod",
        "/president.gateway.v1.NoSuchService/Play",
        "/president.players.v1.PlayersService/ListRevocations",
    ],
)
async def test_a_path_that_is_no_method_is_connects_unimplemented(
    http: httpx.AsyncClient, path: str
) -> None:
    """Connect JSON and binary get HTTP 404 with a Connect error; gRPC-Web its status 12."""
    for headers, payload in ((JSON, b"{}"), (PROTO, b"")):
        answer = await http.post(path, content=payload, headers=headers)
        assert answer.status_code == 404, answer.text
        assert answer.headers["content-type"] == "application/json"
        assert answer.json()["code"] == "unimplemented"
        assert path[1:] in answer.json()["message"]
        assert error_reason(answer.json()) == "UNKNOWN_METHOD"
    web = await http.post(
        path, content=envelope(b""), headers={"content-type": "application/grpc-web+proto"}
    )
    assert web.status_code == 200 and web.headers["grpc-status"] == "12"
    # The static site is still there, and a GET of a method's path is not a call.
    assert (await http.get("/")).status_code == 200
    assert (await http.get(path)).status_code == 404


async def test_watch_through_the_edge_is_the_native_watch_change_for_change(
    http: httpx.AsyncClient, native: GatewayClient
) -> None:
    await native.create_table("classic", visibility="practice", display_name="Fay")
    spectator = native.sibling()
    await spectator.spectate(native.table_id)
    edge: dict[int, pb.WatchResponse] = {}
    direct: dict[int, pb.WatchResponse] = {}
    watched: dict[int, pb.WatchResponse] = {}
    readers = [
        asyncio.create_task(edge_watch(http, native.token, native.table_id, edge, until=1)),
        asyncio.create_task(native_watch(native, direct, until=1)),
        asyncio.create_task(edge_watch(http, spectator.token, native.table_id, watched, until=1)),
    ]
    await asyncio.sleep(0.5)  # every stream's snapshot first
    await native.start()
    await asyncio.wait_for(asyncio.gather(*readers), 30)

    started = next(v for v, change in edge.items() if change.event.type == ROUND_STARTED)
    common = sorted(set(edge) & set(direct))
    assert started in common and len(common) >= 2
    for version in common:
        if direct[version].snapshot == edge[version].snapshot:
            assert unclocked_change(edge[version]) == unclocked_change(direct[version]), version
    mine = edge[started]
    assert len(mine.view.round.hand) == 13
    dealt = epb.RoundStarted.FromString(mine.event.payload)
    assert [len(h.cards) for h in dealt.hands if h.seat != native.seat] == [0, 0, 0]
    # The spectator, through the edge, sees no card of anyone.
    theirs = watched[started]
    assert not theirs.view.round.hand
    assert all(not h.cards for h in epb.RoundStarted.FromString(theirs.event.payload).hands)


async def test_watch_over_grpc_web_is_the_native_snapshot(
    http: httpx.AsyncClient, native: GatewayClient
) -> None:
    await native.create_table("classic", visibility="practice", display_name="Ivy")
    headers = {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"}
    body = envelope(pb.WatchRequest(table_id=native.table_id).SerializeToString())
    path = f"{SERVICE_PATH}/Watch"
    async with http.stream(
        "POST", path, content=body, headers={**headers, **bearer(native.token)}
    ) as got:
        assert got.headers["content-type"].startswith("application/grpc-web")
        buffer = b""
        async for chunk in got.aiter_bytes():
            buffer += chunk
            if len(buffer) >= 5 and len(buffer) >= 5 + int.from_bytes(buffer[1:5], "big"):
                break
    flags, payload = envelopes(buffer[: 5 + int.from_bytes(buffer[1:5], "big")])[0]
    assert flags == 0  # a data frame
    snapshot = pb.WatchResponse.FromString(payload)
    assert snapshot.snapshot
    now = await native.get_table()
    # The stream's opening and closing are presence reports (events): the view's content,
    # compared below, shows that nothing else moved.
    assert snapshot.version <= now.version
    assert unpresent(snapshot.view) == unpresent(now)


async def test_a_watch_with_a_forged_token_ends_with_the_native_refusal(
    http: httpx.AsyncClient, native: GatewayClient
) -> None:
    await native.create_table("classic", visibility="practice", display_name="Gus")
    forged = native.token + "x"
    expected = await native_refusal(native.sibling(token=forged).get_table())
    got = await http.post(
        f"{SERVICE_PATH}/Watch",
        content=envelope(pb.WatchRequest(table_id=native.table_id).SerializeToString()),
        headers={"content-type": "application/connect+proto", **bearer(forged)},
    )
    frames = envelopes(got.content)
    assert frames[-1][0] & END_STREAM
    error = end_of_stream_error(frames[-1][1])
    assert error["code"] == "unauthenticated"
    assert error["message"] == expected.message
    assert error_reason(error) == expected.reason


# --------------------------------------------------------------------------- the process
def edge_process(stack: Stack, port: int, **env: str) -> subprocess.Popen[bytes]:
    """Another web edge in front of the stack's gateway, on ``port``."""
    environment = {
        **stack.base_env(),
        "PRESIDENT_WEB_PORT": str(port),
        "PRESIDENT_METRICS_PORT": "-1",
        **env,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "president.services.web.main"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


async def until_up(url: str, verify: ssl.SSLContext | bool = True) -> None:
    async with httpx.AsyncClient(verify=verify) as client:
        for _ in range(200):
            try:
                if (await client.get(f"{url}/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                await asyncio.sleep(0.1)
    raise AssertionError(f"no edge at {url}")


async def test_metrics_count_the_edge_calls(http: httpx.AsyncClient, web_stack: Stack) -> None:  # noqa: F811
    await unary(http, "ListTables", {})
    metrics = httpx.get(f"http://127.0.0.1:{web_stack.metrics_ports['web']}/metrics").text
    assert 'president_grpc_requests_total{code="OK",method="ListTables",service="web"}' in metrics


async def test_tls_from_a_configured_certificate(web_stack: Stack, tmp_path: Path) -> None:  # noqa: F811
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    port = free_port()
    process = edge_process(
        web_stack, port, PRESIDENT_WEB_TLS_CERT=str(cert), PRESIDENT_WEB_TLS_KEY=str(key)
    )
    try:
        url = f"https://127.0.0.1:{port}"
        trusted = ssl.create_default_context(cafile=str(cert))
        await until_up(url, verify=trusted)
        async with httpx.AsyncClient(base_url=url, verify=trusted) as client:
            answer = await unary(client, "ListTables", {})
            assert answer.status_code == 200
            assert answer.headers["strict-transport-security"].startswith("max-age=")
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=3)  # no plaintext beside it
    finally:
        process.terminate()
        process.wait(20)


async def test_sigterm_drains_the_streams_under_way_then_stops(
    web_stack: Stack,  # noqa: F811
    native: GatewayClient,
) -> None:
    await native.create_table("classic", visibility="practice", display_name="Hal")
    port = free_port()
    process = edge_process(web_stack, port)
    url = f"http://127.0.0.1:{port}"
    await until_up(url)
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        headers = {"content-type": "application/connect+proto", **bearer(native.token)}
        body = envelope(pb.WatchRequest(table_id=native.table_id).SerializeToString())
        async with client.stream(
            "POST", f"{SERVICE_PATH}/Watch", content=body, headers=headers
        ) as got:
            chunks = got.aiter_bytes()
            first = await anext(chunks)  # the snapshot: the stream is under way
            assert pb.WatchResponse.FromString(envelopes(first)[0][1]).snapshot
            process.send_signal(signal.SIGTERM)
            rest = b"".join([chunk async for chunk in chunks])
    # The stream ended well-formed, telling the browser to reconnect and resume.
    flags, payload = envelopes(rest)[-1]
    assert flags & END_STREAM
    error = end_of_stream_error(payload)
    assert error["code"] == "unavailable" and "resume" in error["message"]
    assert error_reason(error) == "SERVER_DRAINING"
    assert process.wait(20) == 0
    log = process.stdout.read().decode() if process.stdout else ""
    assert '"event": "stopped"' in log
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/healthz", timeout=3)


async def native_malformed(stack: Stack) -> tuple[str, str, str]:
    """The native gateway's refusal of bytes that are no CreateTable request: code name,
    sentence and reason."""
    async with grpc.aio.insecure_channel(stack.gateway) as channel:
        call = channel.unary_unary(
            f"{SERVICE_PATH}/CreateTable",
            request_serializer=bytes,
            response_deserializer=bytes,
        )
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await call(b"\xff\xff\xff\xff")
    details = dict(raised.value.trailing_metadata() or ())["grpc-status-details-bin"]
    status = status_pb2.Status.FromString(details)  # type: ignore[arg-type]
    info = error_details_pb2.ErrorInfo()
    status.details[0].Unpack(info)
    return raised.value.code().name.lower(), raised.value.details() or "", info.reason


def grpc_web_trailers(response: httpx.Response) -> dict[str, str]:
    """The status of a gRPC-Web answer: its trailer frame, or its headers when trailers-only."""
    fields = {key.lower(): value for key, value in response.headers.items()}
    for flags, payload in envelopes(response.content):
        if flags & GRPC_WEB_TRAILER:
            for line in payload.decode().split("\r\n"):
                key, _, value = line.partition(":")
                if key:
                    fields[key.strip().lower()] = value.strip()
    return fields


def details_reason(encoded: str) -> str:
    raw = base64.b64decode(encoded + "=" * (-len(encoded) % 4))
    status = status_pb2.Status.FromString(raw)
    info = error_details_pb2.ErrorInfo()
    status.details[0].Unpack(info)
    return info.reason


async def test_malformed_messages_get_the_native_refusal(
    http: httpx.AsyncClient,
    web_stack: Stack,  # noqa: F811
) -> None:
    """Bad JSON, JSON nested past Python's parser, bad binary, and an enveloped message
    flagged compressed with no encoding named: each is INVALID_ARGUMENT, MALFORMED_REQUEST,
    with the native gateway's sentence and never the parser's words or INTERNAL."""
    code, sentence, reason = await native_malformed(web_stack)
    assert (code, reason) == ("invalid_argument", "MALFORMED_REQUEST")
    path = f"{SERVICE_PATH}/CreateTable"
    for body, headers in (
        (b'{"displayName": ', JSON),
        (b'{"options": ' + b"[" * 100_000, JSON),
        (b"\xff\xff\xff\xff", PROTO),
    ):
        got = await http.post(path, content=body, headers=headers)
        assert got.status_code == 400
        error = got.json()
        assert (error["code"], error["message"]) == (code, sentence), error
        assert error_reason(error) == reason

    # gRPC-Web, a message flagged compressed (flags 1) and no grpc-encoding.
    flagged = envelope(pb.GetTableRequest(table_id="t1").SerializeToString(), flags=1)
    web = await http.post(
        f"{SERVICE_PATH}/GetTable",
        content=flagged,
        headers={"content-type": "application/grpc-web+proto", "x-grpc-web": "1"},
    )
    status = grpc_web_trailers(web)
    assert status["grpc-status"] == "3"  # INVALID_ARGUMENT, not 13 (INTERNAL)
    assert details_reason(status["grpc-status-details-bin"]) == reason
    assert "compressed" in urllib.parse.unquote(status["grpc-message"])

    # Connect's stream (Watch), the same message.
    async with http.stream(
        "POST",
        f"{SERVICE_PATH}/Watch",
        content=envelope(pb.WatchRequest(table_id="t1").SerializeToString(), flags=1),
        headers={"content-type": "application/connect+proto"},
    ) as stream:
        body = b"".join([chunk async for chunk in stream.aiter_bytes()])
    ((flags, payload),) = envelopes(body)
    assert flags & END_STREAM
    error = end_of_stream_error(payload)
    assert error["code"] == "invalid_argument" and error_reason(error) == reason
    assert "compressed" in error["message"]


#: The test's guard against a server that never gives up on a slow client: no speed goal.
SLOW_GUARD_SECONDS = 30.0


def dribble(address: str, opening: bytes) -> bytes:
    """Connect, send ``opening``, then one more header byte every half second until the
    edge answers or closes (or the guard runs out); what it answered."""
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=SLOW_GUARD_SECONDS) as raw:
        raw.sendall(opening)
        raw.settimeout(0.5)
        answer = b""
        started = time.monotonic()
        while time.monotonic() - started < SLOW_GUARD_SECONDS:
            try:
                chunk = raw.recv(4096)
            except TimeoutError:
                with contextlib.suppress(OSError):
                    raw.sendall(b"x")  # X-Slow: xxxx... never ends
                continue
            except ConnectionResetError:
                break
            if not chunk:
                break
            answer += chunk
        return answer


async def test_slow_request_headers_get_408_and_the_connection_closes(
    web_stack: Stack,  # noqa: F811
) -> None:
    """A client that dribbles its headers, or sends nothing at all, is answered 408 and
    closed once HEADER_SECONDS pass, however long it keeps dribbling."""
    address = web_stack.address("web")
    opening = b"GET /healthz HTTP/1.1\r\nHost: edge\r\nX-Slow: "
    for sent in (opening, b""):
        answer = await asyncio.to_thread(dribble, address, sent)
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert b"took too long" in answer
    # A quick request on the same edge is untouched.
    async with httpx.AsyncClient(base_url=base_url(web_stack)) as http:
        assert (await http.get("/healthz")).status_code == 200
