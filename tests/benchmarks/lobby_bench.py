"""The lobby over the gateway: what ListTables costs, whatever the tables it does not list.

For each table count (500 and 5,000 by default) a fresh stack runs on this
machine (its own NATS, the seven services as processes, SQLite with WAL; with
``--postgres URL`` also a fresh database on that PostgreSQL server). Before
it starts, the store gets that many tables no lobby lists: half private,
four in ten practice, one in ten public and full (four seats taken). Then,
through the gateway, printed per point:

- ListTables of the default lobby (an empty answer): p50/p99;
- the first ListTables right after a burst of table creations through the
  gateway (private tables, so the answer stays empty), and the one after it;
- with 1,000 public open tables added (written to the store by this process,
  as another replica would): a page of the default size and of the largest
  size, p50/p99 and the bytes of the answer; walking every page of the
  lobby at both sizes (how long, how many pages, every table once).

The load average is printed with the numbers: the machine is shared. Prints
numbers; asserts nothing.

Run: ``.venv/bin/python tests/benchmarks/lobby_bench.py [--tables 500,5000] [--calls 100]
[--burst 200] [--postgres postgresql+psycopg://postgres@127.0.0.1:5432/postgres]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "tests" / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import uvloop  # noqa: E402
from sqlalchemy import make_url  # noqa: E402

from president.client import GatewayClient  # noqa: E402
from president.hosting.dealer import LocalDealer  # noqa: E402
from president.hosting.host import TableHost  # noqa: E402
from president.rules import game as g  # noqa: E402
from president.servicekit.launcher import NatsServer, Stack  # noqa: E402
from president.services.gateway.calls.page_tokens import MAX_PAGE  # noqa: E402
from president.services.table.app import TableApp  # noqa: E402
from president.services.table.directory import TableDirectory  # noqa: E402
from president.store import EventStore  # noqa: E402
from tests.support.postgres import PostgresServer  # noqa: E402

T = TypeVar("T")
PUBLIC_TABLES = 1_000
#: Threads writing the tables before the stack starts (the store groups their commits).
WRITERS = 8


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _fill(url: str, first: int, count: int, kind: Callable[[int], str]) -> float:
    """``count`` tables numbered from ``first``, each of ``kind(number)`` (private,
    practice, full: public with every seat taken, open: public with free seats),
    written straight to the store; the seconds it took."""
    begin = time.perf_counter()
    with EventStore.from_url(url, migrate=True) as store:
        host = TableHost(store, LocalDealer())
        app = TableApp(store, host, TableDirectory(store))

        def one(number: int) -> None:
            table_id = f"bench-{number:05d}"
            what = kind(number)
            visibility = "public" if what in ("full", "open") else what
            app.create(
                table_id,
                "house",
                {},
                4,
                visibility,
                "",
                f"create-{table_id}",
                name=f"Table {number}",
            )
            if what == "full":
                for seat in range(4):
                    sit = g.SitDown(seat, f"p{number}-{seat}")
                    host.decide_and_append(table_id, sit, f"{table_id}/{seat}", "server")

        with ThreadPoolExecutor(WRITERS) as pool:
            list(pool.map(one, range(first, first + count)))
    return time.perf_counter() - begin


#: What the tables no lobby lists are, by their number's last digit.
HIDDEN = ("private",) * 5 + ("practice",) * 4 + ("full",)


def _hidden(number: int) -> str:
    """Half private, four in ten practice, one in ten public and full."""
    return HIDDEN[number % 10]


async def _timed(call: Callable[[], Awaitable[T]], count: int) -> tuple[list[float], T]:
    """``count`` calls one after the other: how long each took, and the last answer."""
    spent = []
    for _ in range(count):
        begin = time.perf_counter()
        answer = await call()
        spent.append(time.perf_counter() - begin)
    return spent, answer


def _line(what: str, spent: list[float], extra: str = "") -> None:
    print(
        f"  {what:<44} p50 {_quantile(spent, 0.5) * 1e3:7.2f} ms   "
        f"p99 {_quantile(spent, 0.99) * 1e3:7.2f} ms  {extra}"
    )


async def _create(creator: GatewayClient, count: int) -> None:
    """``count`` private tables, one after the other (the lobby lists none)."""
    for _ in range(count):
        await creator.create_table("house", visibility="private", display_name="Burst")


async def _walk(client: GatewayClient, size: int) -> tuple[float, int, list[str]]:
    """Every page of the lobby at ``size``: seconds, pages, table ids in order."""
    begin = time.perf_counter()
    token, pages, seen = "", 0, []
    while True:
        page = await client.lobby_page(page_size=size, page_token=token)
        pages += 1
        seen.extend(summary.table_id for summary in page.tables)
        token = page.next_page_token
        if not token:
            return time.perf_counter() - begin, pages, seen


async def _measure(stack: Stack, url: str, tables: int, calls: int, burst: int) -> None:
    client = GatewayClient.connect(stack.gateway)
    try:
        for _ in range(20):  # the stack warm: its channels open, the directory folded
            await client.list_tables()
        await asyncio.sleep(1.0)
        spent, answer = await _timed(client.list_tables, calls)
        _line("default lobby, empty answer", spent, f"({len(answer)} tables)")
        creators = [client.sibling() for _ in range(8)]
        for number in range(3):
            begin = time.perf_counter()
            await asyncio.gather(*(_create(creator, burst // 8) for creator in creators))
            created = time.perf_counter() - begin
            first, _ = await _timed(client.list_tables, 1)
            second, _ = await _timed(client.list_tables, 1)
            print(
                f"  burst {number + 1}: {burst // 8 * 8} creations in {created:5.2f} s, "
                f"then ListTables {first[0] * 1e3:7.2f} ms, the next {second[0] * 1e3:7.2f} ms"
            )
        filled = await asyncio.to_thread(_fill, url, 50_000, PUBLIC_TABLES, lambda _: "open")
        begin = time.perf_counter()
        while True:
            _, _, seen = await _walk(client, MAX_PAGE)
            if len(seen) >= PUBLIC_TABLES or time.perf_counter() - begin > 60:
                break
            await asyncio.sleep(0.05)
        print(
            f"  {PUBLIC_TABLES:,} public open tables written in {filled:.1f} s, "
            f"all listed {time.perf_counter() - begin:.2f} s later"
        )
        for size in (0, MAX_PAGE):
            spent, page = await _timed(partial(client.lobby_page, page_size=size), calls)
            _line(
                f"a page of {len(page.tables)} (page_size {size})",
                spent,
                f"{page.ByteSize():,} bytes",
            )
        for size in (0, MAX_PAGE):
            walks = [await _walk(client, size) for _ in range(3)]
            seconds = sorted(walk[0] for walk in walks)[1]
            _, pages, seen = walks[0]
            print(
                f"  walk of every page (page_size {size}): {seconds * 1e3:7.1f} ms median of 3, "
                f"{pages} pages, {len(seen)} tables, {len(set(seen))} distinct"
            )
    finally:
        await client.close()


def _point(backend: str, postgres: str, tables: int, calls: int, burst: int) -> None:
    with tempfile.TemporaryDirectory(prefix="lobby-bench-") as work:
        workdir = Path(work)
        server = None
        if backend == "sqlite":
            url = f"sqlite:///{workdir / 'president.db'}"
        else:
            server = PostgresServer(make_url(postgres).set(database="postgres"))
            url = server.create_database("lobby_bench")
        try:
            filled = _fill(url, 0, tables, _hidden)
            print(
                f"{backend}, {tables:,} tables no lobby lists (written in {filled:.1f} s), "
                f"load {os.getloadavg()[0]:.2f}"
            )
            nats_server = NatsServer(workdir / "nats").start()
            env = {
                "PRESIDENT_TOKEN_SECRET": uuid.uuid4().hex,
                "PRESIDENT_LOG_LEVEL": "warning",
                "PRESIDENT_LIMITS_SCALE": "1000000",
            }
            stack = Stack(workdir / "stack", url, nats_server.url, env)
            try:
                stack.start()
                uvloop.run(_measure(stack, url, tables, calls, burst))
            finally:
                stack.stop()
                nats_server.stop()
        finally:
            if server is not None:
                server.close()  # drops the database


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="500,5000", help="table counts, comma-separated")
    parser.add_argument("--calls", type=int, default=100, help="calls per measured point")
    parser.add_argument("--burst", type=int, default=200, help="creations in each burst")
    parser.add_argument(
        "--postgres",
        default="",
        help="also measure on a fresh database of this PostgreSQL server (an admin URL)",
    )
    args = parser.parse_args()
    counts = [int(count) for count in args.tables.split(",")]
    if not all(1 <= count <= 20_000 for count in counts) or not 1 <= args.calls <= 10_000:
        parser.error("--tables 1..20000 each, --calls 1..10000")
    backends = ["sqlite"] + (["postgres"] if args.postgres else [])
    for backend in backends:
        for count in counts:
            _point(backend, args.postgres, count, args.calls, args.burst)
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
