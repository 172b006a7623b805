"""The spectators' HTTP door's crowd of one table: each change framed once per encoding and
the same bytes handed to every spectator that holds the version before it; a spectator
whose socket is full skipped, then sent the view now (the same bytes for all skipped
there); the wire's envelope, end of stream and request checks.

The feed runs on a real TableHost and SQLite store (``test_gateway_units``); the
spectators' sockets are fakes of the door's own stream (what a crowd's ``Broadcast`` writes to).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import ssl
import struct
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from google.protobuf import json_format
from google.rpc import error_details_pb2
from prometheus_client import REGISTRY

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.errors import Code, ServiceError
from president.servicekit.identity import AccessTokens, Identity
from president.servicekit.nats import Subjects
from president.servicekit.tls import TlsSettings
from president.services.gateway.api import crowds
from president.services.gateway.api.audience_http import AudienceDoor
from president.services.gateway.api.connect import JSON, PROTO, Codec, end_of_stream
from president.services.gateway.api.connect import read_request as _request
from president.services.gateway.api.crowds import WIRES
from president.services.gateway.identity.auth import Verifier
from president.services.gateway.identity.revocations import Revocations
from president.services.gateway.limits.admission import Admission
from president.services.gateway.streams.entries import Entry
from president.services.gateway.streams.fanout import Policy, Start, start_at
from president.services.gateway.streams.feed import FeedHub, TableFeed
from tests.support.certificates import Authority
from tests.unit.services import test_gateway_units as units

tables = units.tables


class FakeSocket:
    """What the crowd writes to a spectator: every write kept, the socket full or not."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self.wire = WIRES[codec]
        self.policy = Policy.NEWEST
        self.at: Entry
        self.drained: Callable[[], None] = lambda: None
        self.paused = False
        self.behind = False
        self.writes: list[bytes] = []
        self.ended: Exception | None = None

    @staticmethod
    def seat_for(_table: object) -> None:
        return None

    @property
    def version(self) -> int:
        return self.at.version

    def end(self, error: Exception | None) -> None:
        self.ended = error

    def offer(self, write: list[bytes]) -> bool:
        if self.paused:
            self.behind = True
            return False
        self.behind = False
        self.writes.append(b"".join(write))
        return True

    def messages(self, data: bytes) -> list[pb.WatchResponse]:
        """The WatchResponses of one written chunk."""
        size_end = data.index(b"\r\n")
        size = int(data[:size_end], 16)
        body = data[size_end + 2 : size_end + 2 + size]
        assert data[size_end + 2 + size :] == b"\r\n"
        out: list[pb.WatchResponse] = []
        at = 0
        while at < size:
            flags, length = struct.unpack_from(">BI", body, at)
            assert flags == 0
            raw = body[at + 5 : at + 5 + length]
            if self.codec is JSON:
                out.append(json_format.Parse(raw, pb.WatchResponse()))
            else:
                out.append(pb.WatchResponse.FromString(raw))
            at += 5 + length
        return out


def _start(feed: TableFeed, from_version: int) -> Start:
    assert feed.current is not None
    return start_at(feed.current, feed.history, from_version, 512)


async def test_a_flush_hands_the_same_bytes_to_every_spectator_of_an_encoding(
    tables: units.LocalTables,
) -> None:
    """Spectators in binary and JSON join; the seat plays; one flush writes one chunk
    object per encoding to all of them, holding every change after their version, each the
    spectators' shared WatchResponse (no seat's cards)."""
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    crowd = crowds.crowd(feed)
    sockets = [FakeSocket(PROTO if n % 2 else JSON) for n in range(40)]
    for sock in sockets:
        crowd.join(sock, _start(feed, 0))
    start = feed.version
    assert all(sock.version == start and len(sock.writes) == 1 for sock in sockets)
    units.play_human(tables, "t1", 1)
    await feed.catch_up()
    crowd.flush()
    fresh = [entry for entry in feed.history if entry.version > start]
    assert fresh
    for codec in (PROTO, JSON):
        mine = [sock for sock in sockets if sock.codec is codec]
        assert len({id(sock.writes[-1]) for sock in mine}) == 1, "one framing per encoding"
        got = mine[0].messages(mine[0].writes[-1])
        assert [change.version for change in got] == [entry.version for entry in fresh]
        for change, entry in zip(got, fresh, strict=True):
            assert change == pb.WatchResponse.FromString(entry.watch_response(None))
            assert not change.view.HasField("viewer_seat") and not change.view.round.hand
    assert all(sock.version == feed.version for sock in sockets)
    crowd.flush()  # nothing new: nothing written
    assert all(len(sock.writes) == 2 for sock in sockets)
    await hub.close()  # the replica stops: every stream ends, told to resume
    assert all(
        isinstance(sock.ended, ServiceError) and sock.ended.reason == "SERVER_DRAINING"
        for sock in sockets
    )


async def test_a_full_socket_is_skipped_then_sent_the_view_now(
    tables: units.LocalTables,
) -> None:
    """A spectator whose socket is full gets no write and is marked behind; drained, it is
    sent the newest view as one snapshot marked skipped, the same bytes as every other
    spectator skipped at that version; the spectators that keep up get every change."""
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    crowd = crowds.crowd(feed)
    keeping_up = FakeSocket(PROTO)
    slow = [FakeSocket(PROTO), FakeSocket(PROTO)]
    for sock in (keeping_up, *slow):
        crowd.join(sock, _start(feed, 0))
    start = feed.version
    for sock in slow:
        sock.paused = True
    for _ in range(3):
        units.play_human(tables, "t1", 1)
        await feed.catch_up()
        crowd.flush()
    assert all(sock.behind and len(sock.writes) == 1 for sock in slow)
    seen = [c.version for data in keeping_up.writes[1:] for c in keeping_up.messages(data)]
    assert seen == list(range(start + 1, feed.version + 1))
    for sock in slow:
        sock.paused = False
        sock.drained()  # what its stream does when the socket drains
    assert slow[0].writes[-1] is slow[1].writes[-1]
    (view_now,) = slow[0].messages(slow[0].writes[-1])
    assert view_now.snapshot and view_now.skipped and view_now.version == feed.version
    assert all(not sock.behind and sock.version == feed.version for sock in slow)
    await hub.close()


async def test_a_flush_counts_in_the_audiences_delay_and_deliveries(
    tables: units.LocalTables,
) -> None:
    """An audience replica's alert reads its spectators' delay: a door's flush that writes
    observes how long its oldest change waited, and counts every change it delivered."""
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    crowd = crowds.crowd(feed)
    sockets = [FakeSocket(PROTO) for _ in range(3)]
    for sock in sockets:
        crowd.join(sock, _start(feed, 0))
    delays = REGISTRY.get_sample_value("president_gateway_audience_delay_seconds_count") or 0
    sent = REGISTRY.get_sample_value("president_gateway_audience_deliveries_total") or 0
    start = feed.version
    units.play_human(tables, "t1", 1)
    await feed.catch_up()  # the crowd's flush is due: at most one pace from now
    async with asyncio.timeout(5):
        while len(sockets[0].writes) < 2:
            await asyncio.sleep(0.01)
    changes = feed.version - start
    assert REGISTRY.get_sample_value("president_gateway_audience_delay_seconds_count") == (
        delays + 1
    )
    assert REGISTRY.get_sample_value("president_gateway_audience_deliveries_total") == (
        sent + changes * len(sockets)
    )
    await hub.close()


def _body(chunk: bytes) -> bytes:
    """The payload of the first HTTP chunk of ``chunk``."""
    size_end = chunk.index(b"\r\n")
    return chunk[size_end + 2 : size_end + 2 + int(chunk[:size_end], 16)]


def test_the_end_of_a_stream_carries_the_code_the_sentence_and_the_reason() -> None:
    ended = end_of_stream(ServiceError(Code.UNAUTHENTICATED, "TOKEN_EXPIRED", "your token expired"))
    body = _body(ended)
    assert ended.endswith(b"\r\n0\r\n\r\n") and body[0] == 0x02
    error = json.loads(body[5:])["error"]
    assert (error["code"], error["message"]) == ("unauthenticated", "your token expired")
    (detail,) = error["details"]
    value = detail["value"]
    info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(value + "=" * (-len(value) % 4)))
    assert (detail["type"], info.reason) == ("google.rpc.ErrorInfo", "TOKEN_EXPIRED")
    # The same ErrorInfo, readable without protobuf.
    assert detail["debug"] == {"reason": "TOKEN_EXPIRED", "domain": info.domain}
    clean = _body(end_of_stream(None))
    assert clean[0] == 0x02 and json.loads(clean[5:]) == {}


INVALID = Code.INVALID_ARGUMENT


@pytest.mark.parametrize(
    ("body", "code", "reason", "words"),
    [
        (b"", INVALID, "MALFORMED_REQUEST", "5 bytes of envelope"),
        (
            b"\x01\x00\x00\x00\x00",
            Code.UNIMPLEMENTED,
            "COMPRESSION_UNSUPPORTED",
            "uncompressed",
        ),
        (b"\x00\x00\x00\x00\x09abc", INVALID, "MALFORMED_REQUEST", "says 9 bytes but 3 came"),
        (b"\x00\x00\x00\x00\x03abc", INVALID, "MALFORMED_REQUEST", "could not be read"),
    ],
)
def test_a_malformed_request_is_refused_with_what_was_wrong(
    body: bytes, code: Code, reason: str, words: str
) -> None:
    with pytest.raises(ServiceError) as refused:
        _request(PROTO, body)
    assert (refused.value.status, refused.value.reason) == (code, reason)
    assert words in refused.value.message


def test_a_request_is_read_in_either_encoding() -> None:
    wanted = pb.WatchRequest(table_id="t1", from_version=7)
    binary = wanted.SerializeToString()
    assert _request(PROTO, struct.pack(">BI", 0, len(binary)) + binary) == wanted
    text = json_format.MessageToJson(wanted).encode()
    assert _request(JSON, struct.pack(">BI", 0, len(text)) + text) == wanted


async def test_the_door_speaks_tls_with_the_gateways_certificate(
    tables: units.LocalTables, tmp_path: Path
) -> None:
    """With the public TLS set, the door listens over TLS: a client that trusts the
    gateway's authority opens a stream there (a bad token: refused as a Connect error over
    the encrypted socket); one that speaks plain HTTP gets no answer."""
    units.bot_table(tables)
    authority = Authority("club", tmp_path / "tls")
    pair = authority.issue("gateway")
    tls = TlsSettings(public_cert=str(pair.cert_file), public_key=str(pair.key_file))
    context = tls.public_ssl_context()
    assert context is not None and TlsSettings().public_ssl_context() is None
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    verifier = Verifier(AccessTokens("s" * 32), Revocations())
    door = AudienceDoor(hub, verifier, Admission.from_env(""))
    ready = asyncio.Event()
    serving = asyncio.create_task(door.serve("127.0.0.1", 0, ready, tls=context))
    await asyncio.wait_for(ready.wait(), 5)
    try:
        async with httpx.AsyncClient(
            base_url=f"https://127.0.0.1:{door.port}",
            verify=ssl.create_default_context(cafile=str(authority.cert_file)),
        ) as client:
            assert (await client.get("/healthz")).text == "ok"
            body = pb.WatchRequest(table_id="t1").SerializeToString()
            answer = await client.post(
                "/president.gateway.v1.GatewayService/Watch",
                content=struct.pack(">BI", 0, len(body)) + body,
                headers={"content-type": PROTO.content_type, "authorization": "Bearer junk"},
            )
            assert answer.content[0] == 0x02
            assert json.loads(answer.content[5:])["error"]["code"] == "unauthenticated"
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{door.port}") as plain:
            with pytest.raises(httpx.HTTPError):
                await plain.get("/healthz", timeout=5)
    finally:
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        await hub.close()


def _fan_token(tokens: AccessTokens) -> str:
    """A guest spectator's access token."""
    return tokens.issue(
        Identity(
            account_id="fan", display_name="Fan", kind="guest", session_id="s1", expires_at=10**10
        )
    )


def _watch_at(
    client: httpx.AsyncClient, body: bytes, token: str, headers: dict[str, str] | None = None
) -> contextlib.AbstractAsyncContextManager[httpx.Response]:
    """A binary Connect Watch stream at the door, with ``token`` (and ``headers``)."""
    return client.stream(
        "POST",
        "/president.gateway.v1.GatewayService/Watch",
        content=struct.pack(">BI", 0, len(body)) + body,
        headers={
            "content-type": PROTO.content_type,
            "authorization": f"Bearer {token}",
            **(headers or {}),
        },
    )


async def test_opening_streams_at_the_door_counts_against_the_watch_rate_limit(
    tables: units.LocalTables,
) -> None:
    """Streams opened faster than the Watch limit allows are refused RESOURCE_EXHAUSTED
    (RATE_LIMITED) before any table is read, as at the gateway."""
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    tokens = AccessTokens("s" * 32)
    verifier = Verifier(tokens, Revocations())
    token = _fan_token(tokens)
    admission = Admission.from_env("", {"PRESIDENT_RATE_STREAM": "3/60"})
    door = AudienceDoor(hub, verifier, admission)
    ready = asyncio.Event()
    serving = asyncio.create_task(door.serve("127.0.0.1", 0, ready))
    await asyncio.wait_for(ready.wait(), 5)
    body = pb.WatchRequest(table_id="t1").SerializeToString()
    codes = []
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{door.port}") as client:
            for _ in range(5):
                async with _watch_at(client, body, token) as answer:
                    first = await anext(answer.aiter_raw())
                    codes.append("stream" if first[0] == 0 else json.loads(first[5:])["error"])
    finally:
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        await hub.close()
    assert codes[:3] == ["stream"] * 3, codes
    for refused in codes[3:]:
        assert refused["code"] == "resource_exhausted", refused
        assert "RATE_LIMITED" in base64.b64decode(refused["details"][0]["value"] + "==").decode(
            "latin-1"
        )


async def test_a_stream_ends_when_its_connect_timeout_passes_and_a_bad_one_is_refused(
    tables: units.LocalTables,
) -> None:
    """A client's ``Connect-Timeout-Ms`` bounds its stream: it gets the table, then the end
    of stream says deadline_exceeded once that time passed; a value that is no count of
    milliseconds is refused with what was wrong, before any table is read."""
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    tokens = AccessTokens("s" * 32)
    token = _fan_token(tokens)
    door = AudienceDoor(hub, Verifier(tokens, Revocations()), Admission.from_env(""))
    ready = asyncio.Event()
    serving = asyncio.create_task(door.serve("127.0.0.1", 0, ready))
    await asyncio.wait_for(ready.wait(), 5)
    body = pb.WatchRequest(table_id="t1").SerializeToString()

    async def watch(timeout: str) -> tuple[list[pb.WatchResponse], dict[str, object], float]:
        started = loop.time()
        async with _watch_at(client, body, token, {"connect-timeout-ms": timeout}) as answer:
            data = await asyncio.wait_for(answer.aread(), 10)
        took = loop.time() - started
        messages, at = [], 0
        while True:
            flags, length = struct.unpack_from(">BI", data, at)
            payload = data[at + 5 : at + 5 + length]
            if flags & 0x02:
                return messages, json.loads(payload)["error"], took
            messages.append(pb.WatchResponse.FromString(payload))
            at += 5 + length

    loop = asyncio.get_running_loop()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{door.port}") as client:
            seen, error, took = await watch("1500")
            assert seen and seen[0].HasField("view"), seen
            assert error["code"] == "deadline_exceeded", error
            assert "1500 ms" in str(error["message"]), error
            assert 1.5 <= took < 8, took
            for bad in ("soon", "0", "12345678901", "-5"):
                seen, error, _ = await watch(bad)
                assert not seen
                assert error["code"] == "invalid_argument", (bad, error)
                assert "Connect-Timeout-Ms" in str(error["message"]), (bad, error)
    finally:
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        await hub.close()
