"""Floods from many addresses, each inside its limits, through the web edge.

Streams: no browser can fill the edge's connections to the gateway; a flood of
streams stops at every client's limit, and another browser's calls still answer.

The stack's gateway carries at most :data:`PER_CONNECTION` streams on one HTTP/2
connection, and the edge has :data:`CONNECTIONS` connections for streams. Three
addresses (named by the one trusted proxy in ``X-Forwarded-For``), each with two
guests, open Watch streams up to their limits: per identity (the token) and per
address. That is twice what one connection carries: on the old edge (every call
on one connection) the seventh stream waited for a slot, and so did every unary
call of every other browser. Now each stream over a limit is refused at once,
RESOURCE_EXHAUSTED with its reason, and a fourth browser still watches and reads.

Costly calls: the gateway runs :data:`COSTLY_SLOTS` log-ins, new guests and new
tables at once, with :data:`COSTLY_WAITING` waiting. A burst from many addresses
beyond that is refused SERVER_BUSY with a retry hint and creates nothing: on the
old gateway every one of them ran (and filled the lobby).
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
    EdgeGuest,
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
COSTLY_SLOTS = 1
COSTLY_WAITING = 1
#: No more than one connection carries at once (PER_CONNECTION), so only the gateway's
#: bound refuses.
BURST = 6


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
        "PRESIDENT_COSTLY_SLOTS": str(COSTLY_SLOTS),
        "PRESIDENT_COSTLY_WAITING": str(COSTLY_WAITING),
        "PRESIDENT_COSTLY_WAITING_PER_PEER": "1",
        "PRESIDENT_RATE_PASSWORD": "off",  # the burst logs into one account
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


class Browser(EdgeGuest):
    """A guest at one address, with a table of its own to watch."""

    def __init__(self, http: httpx.AsyncClient, address: str) -> None:
        super().__init__(http, address)
        self.reading: list[AsyncIterator[bytes]] = []

    async def sit_down(self) -> Browser:
        await super().sit_down()
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


def _retry_hint(refused: httpx.Response) -> bool:
    return any(d["type"] == "google.rpc.RetryInfo" for d in refused.json().get("details", []))


async def test_a_burst_of_costly_calls_from_many_addresses_is_bounded(
    http: httpx.AsyncClient,
) -> None:
    """Log-ins (a password's hash each) and new tables, from BURST addresses at once: at
    most the slots and the waiting run, the rest are refused and change nothing."""
    owner = Browser(http, "192.0.2.200")
    name = f"flooded{uuid.uuid4().hex[:8]}"
    registered = await owner.call(
        "Register", {"name": name, "password": "a long enough password", "displayName": "O"}
    )
    assert registered.status_code == 200, registered.text
    logins = await asyncio.gather(
        *(
            Browser(http, f"192.0.2.{n}").call(
                "LogIn", {"name": name, "password": "a long enough password"}
            )
            for n in range(1, BURST + 1)
        )
    )
    refused = [answer for answer in logins if answer.status_code != 200]
    # At most the slots and the waiting run; a few more if some end before the burst is in.
    assert len(refused) >= BURST - COSTLY_SLOTS - COSTLY_WAITING - 2
    for answer in refused:
        assert answer.status_code == 429 and error_reason(answer.json()) == "SERVER_BUSY", (
            answer.text
        )
        assert _retry_hint(answer)

    hosts = [await Browser(http, f"192.0.2.{n}").sit_down() for n in range(100, 100 + BURST)]
    before = await hosts[0].call("ListTables", {"pageSize": 200})
    lobby = {t["tableId"] for t in before.json().get("tables", [])}
    tables = await asyncio.gather(
        *(
            host.call(
                "CreateTable",
                {
                    "options": {"preset": "classic"},
                    "visibility": "VISIBILITY_PUBLIC",
                    "displayName": "F",
                    "commandId": uuid.uuid4().hex,
                },
            )
            for host in hosts
        )
    )
    created = {t.json()["tableId"] for t in tables if t.status_code == 200}
    busy = [t for t in tables if t.status_code != 200]
    assert busy and all(error_reason(t.json()) == "SERVER_BUSY" for t in busy)
    after = await hosts[0].call("ListTables", {"pageSize": 200})
    assert {t["tableId"] for t in after.json().get("tables", [])} - lobby == created
