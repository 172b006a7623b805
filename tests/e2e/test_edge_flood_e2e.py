"""No browser can fill the web edge's connections to the gateway: a flood of streams stops at
every client's limit, and another browser's calls still answer.

The stack's gateway carries at most :data:`PER_CONNECTION` streams on one HTTP/2
connection, and the edge has :data:`CONNECTIONS` connections for streams. Three
addresses (named by the one trusted proxy in ``X-Forwarded-For``), each with two
guests, open Watch streams up to their limits: per identity (the token) and per
address. That is twice what one connection carries: on the old edge (every call
on one connection) the seventh stream waited for a slot, and so did every unary
call of every other browser. Now each stream over a limit is refused at once,
RESOURCE_EXHAUSTED with its reason, and a fourth browser still watches and reads.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack

import httpx
import pytest

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.launcher import SERVICES, Stack
from tests.support.servers import isolated_env, sqlite_stack_in
from tests.support.web_edge import (
    END_STREAM,
    SERVICE_PATH,
    end_of_stream_error,
    envelope,
    envelopes,
    error_reason,
)

PROXY = "127.0.0.2"
PER_CONNECTION = 6
CONNECTIONS = 3
PER_IDENTITY = 3
PER_PEER = 4
FLOODERS = ("198.51.100.1", "198.51.100.2", "198.51.100.3")
#: Only a bound on a call that must answer (on the old edge it never did).
ANSWER_SECONDS = 15.0


@pytest.fixture(scope="module")
def flooded(tmp_path_factory: pytest.TempPathFactory, nats_url: str) -> Iterator[Stack]:
    workdir = tmp_path_factory.mktemp("flooded")
    env = {
        **isolated_env(),
        "PRESIDENT_LIMITS_SCALE": "1",
        "PRESIDENT_GATEWAY_MAX_STREAMS_PER_CONNECTION": str(PER_CONNECTION),
        "PRESIDENT_WEB_UPSTREAM_CONNECTIONS": str(CONNECTIONS),
        "PRESIDENT_STREAMS_PER_IDENTITY": str(PER_IDENTITY),
        "PRESIDENT_WEB_STREAMS_PER_PEER": str(PER_PEER),
        "PRESIDENT_WEB_TRUSTED_PROXIES": PROXY,
        "PRESIDENT_WEB_STATIC_DIR": str(workdir),
    }
    with sqlite_stack_in(workdir, nats_url, env, (*SERVICES, "web")) as stack:
        yield stack


@pytest.fixture
async def http(flooded: Stack) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.AsyncHTTPTransport(local_address=PROXY)
    async with httpx.AsyncClient(
        base_url=f"http://{flooded.address('web')}", transport=transport, timeout=30
    ) as client:
        yield client


class Browser:
    """A guest at one address, with a table of its own to watch."""

    def __init__(self, http: httpx.AsyncClient, address: str) -> None:
        self.http = http
        self.address = address
        self.token = ""
        self.table_id = ""
        self.reading: list[AsyncIterator[bytes]] = []

    def headers(self, content_type: str = "application/json") -> dict[str, str]:
        out = {"content-type": content_type, "x-forwarded-for": self.address}
        return {**out, "authorization": f"Bearer {self.token}"} if self.token else out

    async def call(self, method: str, body: dict[str, object]) -> httpx.Response:
        return await self.http.post(f"{SERVICE_PATH}/{method}", json=body, headers=self.headers())

    async def sit_down(self) -> Browser:
        created = await self.call("CreateGuest", {"displayName": "Flood"})
        assert created.status_code == 200, created.text
        self.token = created.json()["credentials"]["accessToken"]
        table = await self.call(
            "CreateTable",
            {"options": {"preset": "classic"}, "displayName": "F", "commandId": uuid.uuid4().hex},
        )
        assert table.status_code == 200, table.text
        self.table_id = table.json()["tableId"]
        return self

    async def watch(self, streams: AsyncExitStack) -> str:
        """Open a Watch and read its first message: "" for the snapshot, else the refusal's
        reason. The stream stays open until ``streams`` closes."""
        body = envelope(pb.WatchRequest(table_id=self.table_id).SerializeToString())
        got = await streams.enter_async_context(
            self.http.stream(
                "POST",
                f"{SERVICE_PATH}/Watch",
                content=body,
                headers=self.headers("application/connect+proto"),
            )
        )
        chunks = got.aiter_bytes()
        self.reading.append(chunks)  # held: a dropped reader would close the stream
        buffer = b""
        while len(buffer) < 5 or len(buffer) < 5 + int.from_bytes(buffer[1:5], "big"):
            buffer += await anext(chunks)
        ((flags, payload), *_) = envelopes(buffer)
        if flags & END_STREAM:
            return error_reason(end_of_stream_error(payload))
        assert pb.WatchResponse.FromString(payload).snapshot
        return ""


async def test_a_stream_flood_stops_at_each_clients_limit_and_others_still_answer(
    http: httpx.AsyncClient,
) -> None:
    flooders = [await Browser(http, address).sit_down() for address in FLOODERS for _ in range(2)]
    other = await Browser(http, "203.0.113.9").sit_down()
    async with AsyncExitStack() as streams:

        async def watch(browser: Browser) -> str:
            return await asyncio.wait_for(browser.watch(streams), ANSWER_SECONDS)

        for first, second in zip(flooders[::2], flooders[1::2], strict=True):
            # The first guest of each address up to its identity's limit, then one more.
            assert [await watch(first) for _ in range(PER_IDENTITY)] == [""] * PER_IDENTITY
            assert await watch(first) == "TOO_MANY_STREAMS"
            # The second guest fills the address's limit, then is refused by it.
            for _ in range(PER_PEER - PER_IDENTITY):
                assert await watch(second) == ""
            assert await watch(second) == "TOO_MANY_STREAMS"
        assert len(FLOODERS) * PER_PEER > PER_CONNECTION  # more than one connection carries

        # Another browser still watches, and its calls still answer.
        assert await watch(other) == ""
        read = await asyncio.wait_for(
            other.call("GetTable", {"tableId": other.table_id}), ANSWER_SECONDS
        )
        assert read.status_code == 200, read.text
        assert read.json()["view"]["tableId"] == other.table_id
