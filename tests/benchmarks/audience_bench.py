"""Audiences: W spectators watch the tables four bot clients play; what it costs the seats.

One stack on this machine (SQLite, its own NATS), as ``e2e_bench.py`` runs
it: each table has four seats played by bot clients on ``Session`` streams.
For each W (0, 100, 300, 1,000 by default) and each table count (1 and 16),
W spectators (spread over the tables) each open a ``Watch`` stream of their
table, in a process of their own (so the seats' clients do not share their
event loop), then the games run for the measured time. Printed per point:

- table plays/s (the clients' accepted plays and passes);
- play -> the four seats p50/p99 (until the last seat saw its version);
- play -> the last watcher p50/p99 (until every watcher of the table saw
  that version or a later one: a slow watcher may skip states);
- gateway CPU per delivered message (the gateway's CPU time over the
  messages its streams delivered: the seats' and the watchers');
- gateway RSS per watcher stream (the gateway's RSS with the streams open
  minus before they opened, over W).

``--audience-replicas N`` starts N audience replicas
(``PRESIDENT_GATEWAY_ROLE=audience``) and the watchers watch there; the
CPU and RSS are then the players' gateway's and the audience replicas'
apart. The load average is printed with the numbers: the machine is shared.

Run: ``.venv/bin/python tests/benchmarks/audience_bench.py [--watchers 0,100,300,1000]
[--tables 1,16] [--seconds 8] [--audience-replicas 0]``
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import gc
import multiprocessing
import os
import struct
import sys
import tempfile
import time
import urllib.request
import uuid
from array import array
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "tests" / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import grpc  # noqa: E402
import uvloop  # noqa: E402
from e2e_bench import TableRun, _cpu_seconds, _latencies, _quantile, _table, play_for  # noqa: E402
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: E402

from president.client import GatewayClient  # noqa: E402
from president.gateway.v1 import gateway_pb2 as pb  # noqa: E402
from president.servicekit.launcher import AUDIENCE_NICE, NatsServer, Stack  # noqa: E402

#: Watch streams per channel in the watchers' process.
STREAMS_PER_CHANNEL = 100
WARM_UP_SECONDS = 1.5


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


# -- the watchers' process ---------------------------------------------------------------
#: (gateway address, its spectators' HTTP door or "", table id, watchers).
Spread = list[tuple[str, str, str, int]]
WATCH = "/president.gateway.v1.GatewayService/Watch"


def light_watch_message() -> Any:
    """A ``WatchResponse`` as the bench's watchers read it: the version and ``skipped`` of
    each change (batched in ``changes``), every other field left unparsed.

    A thousand watchers are a thousand devices; here they share one process and the
    machine's two cores with the server, so each reads only what the bench measures
    (parsing every view in full would make the watchers' process, not the gateway, the
    bottleneck). Their field numbers are the real message's."""
    fields = pb.WatchResponse.DESCRIPTOR.fields_by_name
    kind = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(
        name="audience_bench_light_watch.proto", package="audience_bench", syntax="proto3"
    )
    message = file.message_type.add(name="LightWatch")
    for name, of in (("version", kind.TYPE_UINT64), ("skipped", kind.TYPE_BOOL)):
        message.field.add(name=name, number=fields[name].number, type=of, json_name=name)
    message.field.add(
        name="changes",
        number=fields["changes"].number,
        type=kind.TYPE_MESSAGE,
        label=kind.LABEL_REPEATED,
        type_name=".audience_bench.LightWatch",
        json_name="changes",
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("audience_bench.LightWatch"))


class StreamLog:
    """What one watcher saw: each version and when, in two flat arrays. A thousand
    watchers' logs of a quarter of a million entries are the bench's own, not the
    devices': as arrays they hold no object the garbage collector walks, so the
    measuring process does not pause the very latency it measures."""

    __slots__ = ("times", "versions")

    def __init__(self) -> None:
        self.versions = array("q")
        self.times = array("d")

    def append(self, version: int, at: float) -> None:
        self.versions.append(version)
        self.times.append(at)

    def __len__(self) -> int:
        return len(self.versions)

    def first_at(self, version: int) -> float | None:
        """When this watcher first held ``version`` or a later one (None: never)."""
        at = bisect.bisect_left(self.versions, version)
        return self.times[at] if at < len(self.versions) else None


class DoorReader(asyncio.Protocol):
    """A spectator's socket at an HTTP door, read the light way a thousand devices' reading
    stands for here: Connect's chunks walked by hand, and of each read only the newest
    message (the version the bench measures) and each chunk's first (a skipped snapshot
    is always the first of its write) parsed."""

    def __init__(
        self,
        light: Any,
        log: StreamLog,
        ready: asyncio.Semaphore,
        counts: dict[str, int],
    ) -> None:
        self._light = light
        self._log = log
        self._ready: asyncio.Semaphore | None = ready
        self._counts = counts
        self._buffer = b""
        self._headed = False
        self.version = 0
        self.ended: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._buffer, self._headed = b"", False

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer + data
        at = 0
        if not self._headed:
            head = buffer.find(b"\r\n\r\n")
            if head < 0:
                self._buffer = buffer
                return
            self._headed, at = True, head + 4
        newest: tuple[int, int] | None = None
        light, counts = self._light, self._counts
        while True:
            line = buffer.find(b"\r\n", at)
            if line < 0:
                break
            size = int(buffer[at:line], 16)
            if size == 0:
                self._end()
                return
            start = line + 2
            if len(buffer) < start + size + 2:
                break
            counts["writes"] += 1
            first = True
            inner = start
            while inner < start + size:
                flags, length = struct.unpack_from(">BI", buffer, inner)
                if flags & 0x02:
                    self._end()
                    return
                if first:
                    counts["skipped"] += light.FromString(
                        buffer[inner + 5 : inner + 5 + length]
                    ).skipped
                    first = False
                newest = (inner + 5, inner + 5 + length)
                counts["messages"] += 1
                inner += 5 + length
            at = start + size + 2
        if newest is not None:
            self.version = light.FromString(buffer[newest[0] : newest[1]]).version
            self._log.append(self.version, time.perf_counter())
            if self._ready is not None:
                self._ready.release()
                self._ready = None
        self._buffer = buffer[at:]

    def connection_lost(self, exc: Exception | None) -> None:
        self._end()

    def _end(self) -> None:
        if self.ended is not None and not self.ended.done():
            self.ended.set_result(None)


def _watchers_main(tables: Spread, pipe: Connection, nice: int) -> None:
    """The watchers' process: ``count`` Watch streams of each table (at the gateway
    ``address``), as ``(address, table_id, count)``; reports on request. The watchers are
    a thousand devices elsewhere: here they run at the audience replicas' CPU priority, so
    they take the CPU the players' path leaves, not the players'."""
    os.nice(nice)
    uvloop.run(_watchers(tables, pipe))


async def _watchers(tables: Spread, pipe: Connection) -> None:
    channels: list[GatewayClient] = []
    seen: dict[str, list[StreamLog]] = {table_id: [] for _, _, table_id, _ in tables}
    ready = asyncio.Semaphore(0)
    dropped = [0]
    skipped = [0]
    writes = [0]
    counts = {"dropped": 0, "skipped": 0, "writes": 0, "messages": 0}
    light = light_watch_message()
    watch_call: Any = None
    total = sum(count for _, _, _, count in tables)
    tasks: list[asyncio.Task[None]] = []

    async def one(client: GatewayClient, log: StreamLog, watch_call: Any) -> None:
        from_version = 0
        first = True
        while True:
            call = watch_call(
                pb.WatchRequest(from_version=from_version, table_id=client.table_id, batched=True),
                metadata=client.metadata(),
            )
            try:
                async for message in call:
                    now = time.perf_counter()
                    writes[0] += 1
                    for change in message.changes or (message,):
                        log.append(change.version, now)
                        skipped[0] += change.skipped
                        from_version = change.version
                    if first:
                        first = False
                        ready.release()
                return
            except grpc.aio.AioRpcError:
                dropped[0] += 1  # told to resume: resume from the last version seen
                await asyncio.sleep(0.05)

    async def at_door(door: str, token: str, table_id: str, log: StreamLog) -> None:
        """One spectator at an HTTP door, resuming from its last version when told to."""
        host, port = door.rsplit(":", 1)
        loop = asyncio.get_running_loop()
        reading = DoorReader(light, log, ready, counts)
        while True:
            body = pb.WatchRequest(
                table_id=table_id, from_version=reading.version
            ).SerializeToString()
            ended = loop.create_future()
            reading.ended = ended
            transport, _ = await loop.create_connection(lambda: reading, host, int(port))
            transport.write(
                b"POST " + WATCH.encode() + b" HTTP/1.1\r\nhost: bench\r\n"
                b"content-type: application/connect+proto\r\n"
                b"authorization: Bearer " + token.encode() + b"\r\n"
                b"content-length: %d\r\n\r\n"
                % (len(body) + 5)
                + struct.pack(">BI", 0, len(body))
                + body
            )
            await ended
            transport.close()
            counts["dropped"] += 1  # told to resume: resume from the last version seen
            await asyncio.sleep(0.05)

    made = 0
    for address, door, table_id, count in tables:
        spectator: GatewayClient | None = None
        for n in range(count):
            if made % STREAMS_PER_CHANNEL == 0 or n == 0:
                channels.append(GatewayClient.connect(address))
                watch_call = channels[-1].channel.unary_stream(
                    WATCH,
                    request_serializer=pb.WatchRequest.SerializeToString,
                    response_deserializer=light.FromString,
                )
            made += 1
            if spectator is None:
                spectator = channels[-1].sibling()
                await spectator.spectate(table_id)
            client = channels[-1].sibling(token=spectator.token, table_id=table_id)
            log = StreamLog()
            seen[table_id].append(log)
            if door:
                tasks.append(asyncio.create_task(at_door(door, spectator.token, table_id, log)))
            else:
                tasks.append(asyncio.create_task(one(client, log, watch_call)))
    for _ in range(total):
        await ready.acquire()
    gc.freeze()  # the streams' own objects, made once, are not walked again while measured
    pipe.send("ready")
    loop = asyncio.get_running_loop()
    plays: dict[str, list[int]] = await loop.run_in_executor(None, pipe.recv)
    last_seen: list[tuple[str, int, float | None]] = []
    for table_id, versions in plays.items():
        for version in versions:
            latest: float | None = 0.0
            for log in seen[table_id]:
                at = log.first_at(version)
                if at is None:
                    latest = None
                    break
                latest = max(latest or 0.0, at)
            last_seen.append((table_id, version, latest))
    # (at a door the log is one entry per read: its messages are counted apart)
    messages = counts["messages"] or sum(len(log) for logs in seen.values() for log in logs)
    pipe.send(
        (
            last_seen,
            messages,
            writes[0] + counts["writes"],
            dropped[0] + counts["dropped"],
            skipped[0] + counts["skipped"],
        )
    )
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for channel in channels:
        await channel.close()


# -- the audience replicas' own delay ----------------------------------------------------
DELAY_METRIC = "president_gateway_audience_delay_seconds_bucket"


def _delay_buckets(port: int) -> dict[float, float]:
    """The audience delay histogram's cumulative buckets at the replica's /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    out: dict[float, float] = {}
    for line in text.splitlines():
        if line.startswith(DELAY_METRIC + "{"):
            bound = line.split('le="', 1)[1].split('"', 1)[0]
            out[float(bound)] = float(line.rsplit(" ", 1)[1])
    return out


def _delay_quantile(before: dict[float, float], after: dict[float, float], q: float) -> str:
    """The bucket bound the ``q`` quantile of the observations between the two falls in."""
    counts = sorted((bound, after[bound] - before.get(bound, 0.0)) for bound in after)
    if not counts or counts[-1][1] <= 0:
        return "—"
    for bound, seen in counts:
        if seen >= q * counts[-1][1]:
            return "over 2 s" if bound == float("inf") else f"≤ {bound * 1000:g} ms"
    return "—"


# -- one point --------------------------------------------------------------------------
async def _games(shared: GatewayClient, tables: int) -> list[TableRun]:
    return list(await asyncio.gather(*(_table(shared, n, 4) for n in range(tables))))


async def _point(
    stack: Stack, tables: int, watchers: int, seconds: float, door: bool, nice: int
) -> None:
    loop = asyncio.get_running_loop()
    shared = GatewayClient.connect(stack.gateway)
    runs = await _games(shared, tables)
    gateways = {
        name: process.pid
        for name, process in stack.processes.items()
        if name == "gateway" or name.startswith("audience")
    }
    rss_before = {name: _rss_bytes(pid) for name, pid in gateways.items()}
    process = None
    pipe = None
    if watchers:
        doors = [
            (stack.address(name), stack.door(name) if door else "") for name in stack.audience
        ] or [(stack.gateway, "")]
        per_table = [watchers // tables + (n < watchers % tables) for n in range(tables)]
        spread = [  # each table's watchers spread over every audience replica
            (
                grpc_at,
                http_at,
                run.clients[0].table_id,
                count // len(doors) + (d < count % len(doors)),
            )
            for run, count in zip(runs, per_table, strict=True)
            for d, (grpc_at, http_at) in enumerate(doors)
        ]
        pipe, child = multiprocessing.get_context("spawn").Pipe()
        process = multiprocessing.get_context("spawn").Process(
            target=_watchers_main, args=(spread, child, nice), daemon=True
        )
        process.start()
        if not await loop.run_in_executor(None, pipe.poll, 180):
            raise RuntimeError("the watchers did not open their streams in 180 s")
        assert pipe.recv() == "ready"
    rss_open = {name: _rss_bytes(pid) for name, pid in gateways.items()}
    cpu_before = {name: _cpu_seconds(pid) for name, pid in gateways.items()}
    replicas = [name for name in gateways if name != "gateway"] or ["gateway"]
    delay_before = {name: _delay_buckets(stack.metrics_ports[name]) for name in replicas}
    watchers_cpu = _cpu_seconds(process.pid) if process is not None and process.pid else 0.0
    wall = time.perf_counter()
    counting_from, stop_at = await play_for(runs, 4, seconds, warm_up=WARM_UP_SECONDS)
    wall = time.perf_counter() - wall
    cpu = {name: _cpu_seconds(pid) - cpu_before[name] for name, pid in gateways.items()}
    delay_after = {name: _delay_buckets(stack.metrics_ports[name]) for name in replicas}
    if process is not None and process.pid:
        watchers_cpu = _cpu_seconds(process.pid) - watchers_cpu
    load = os.getloadavg()
    last_watcher: list[float] = []
    watcher_messages = watcher_writes = dropped = skipped = 0
    if pipe is not None and process is not None:
        plays = {run.clients[0].table_id: [version for _, version in run.plays] for run in runs}
        pipe.send(plays)
        last_seen, watcher_messages, watcher_writes, dropped, skipped = await loop.run_in_executor(
            None, pipe.recv
        )
        started = {
            (run.clients[0].table_id, version): at for run in runs for at, version in run.plays
        }
        last_watcher = [
            at - started[(table_id, version)]
            for table_id, version, at in last_seen
            if at is not None
        ]
        await loop.run_in_executor(None, process.join, 30)
    await shared.close()
    measured = stop_at - counting_from
    plays_count = sum(len(run.plays) for run in runs)
    seat_latencies = _latencies(runs)
    seat_messages = sum(len(seen) for run in runs for seen in run.seen)

    def ms(values: list[float]) -> str:
        if not values:
            return "—"
        return f"{_quantile(values, 0.5) * 1000:.1f} / {_quantile(values, 0.99) * 1000:.1f} ms"

    audience = [name for name in gateways if name != "gateway"]
    delivered = {name: watcher_messages // len(audience) for name in audience}
    delivered["gateway"] = seat_messages + (0 if audience else watcher_messages)
    writes = {name: watcher_writes // len(audience) for name in audience}
    writes["gateway"] = 0 if audience else watcher_writes

    def per_write(name: str, spent: float) -> str:
        if not writes[name]:
            return ""
        return f", {spent / writes[name] * 1e6:.1f} µs per watcher write ({writes[name]} writes)"

    per_message = [
        f"{name} {spent / delivered[name] * 1e6:.1f} µs "
        f"({spent / wall * 100:.0f}% CPU, {delivered[name]} msgs{per_write(name, spent)})"
        if delivered[name]
        else f"{name} — (no messages)"
        for name, spent in cpu.items()
    ]
    rss = ", ".join(
        f"{name} {(rss_open[name] - rss_before[name]) / max(1, watchers) / 1024:.1f} KiB"
        f" ({rss_open[name] / 2**20:.0f} MiB)"
        for name in gateways
    )
    print(
        f"  W={watchers:<5} tables={tables:<3} plays/s {plays_count / measured:6.1f}"
        f" | play->seats {ms(seat_latencies)} | play->last watcher {ms(last_watcher)}"
        f" | resumes {dropped}, skipped to the view now {skipped} | load {load[0]:.2f}",
        flush=True,
    )
    print(f"      gateway CPU per delivered message: {'; '.join(per_message)}", flush=True)
    if watchers:
        delays = "; ".join(
            f"{name} p50 {_delay_quantile(delay_before[name], delay_after[name], 0.5)}, "
            f"p99 {_delay_quantile(delay_before[name], delay_after[name], 0.99)}"
            for name in replicas
        )
        print(
            f"      a change's wait at the replica until its spectator takes it: {delays}; "
            f"the watchers' process: {watchers_cpu / wall * 100:.0f}% CPU",
            flush=True,
        )
    print(f"      gateway RSS per watcher stream: {rss}", flush=True)


async def _resume_cost(stack: Stack, seconds: float) -> None:
    """Ten watchers resume from version 1 again and again at a table of many changes, while
    another client asks GetTable: the resume's time to its first message, and GetTable's,
    with and without the resumes."""
    shared = GatewayClient.connect(stack.gateway)
    (run,) = await _games(shared, 1)
    await play_for([run], 4, seconds, warm_up=0.0)
    reader = run.clients[1]
    version = (await reader.get_table()).version

    async def get_tables(count: int) -> list[float]:
        out = []
        for _ in range(count):
            started = time.perf_counter()
            await reader.get_table()
            out.append(time.perf_counter() - started)
        return out

    alone = await get_tables(100)
    resumes: list[float] = []
    stop = asyncio.Event()

    async def resume(client: GatewayClient) -> None:
        while not stop.is_set():
            started = time.perf_counter()
            async for _change in client.watch(1):
                break  # the view now (before: the first of every change since version 1)
            resumes.append(time.perf_counter() - started)

    watchers = [await _spectating(shared, run.clients[0].table_id) for _ in range(10)]
    tasks = [asyncio.create_task(resume(watcher)) for watcher in watchers]
    beside = await get_tables(100)
    stop.set()
    await asyncio.gather(*tasks)
    await shared.close()

    def ms(values: list[float]) -> str:
        return (
            f"p50 {_quantile(values, 0.5) * 1000:.1f} / p99 {_quantile(values, 0.99) * 1000:.1f} ms"
        )

    print(
        f"  resume cost at a table of {version} changes: Watch(from_version=1) to its first "
        f"message {ms(resumes)} ({len(resumes)} resumes, 10 at a time); GetTable alone "
        f"{ms(alone)}, beside the resumes {ms(beside)} | load {os.getloadavg()[0]:.2f}",
        flush=True,
    )


async def _spectating(shared: GatewayClient, table_id: str) -> GatewayClient:
    watcher = shared.sibling()
    await watcher.spectate(table_id)
    return watcher


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watchers", default="0,100,300,1000", help="watcher counts, a list")
    parser.add_argument("--tables", default="1,16", help="table counts, a list")
    parser.add_argument("--seconds", type=float, default=8.0, help="measured time per point")
    parser.add_argument(
        "--audience-replicas", type=int, default=0, help="audience replicas the watchers use"
    )
    parser.add_argument(
        "--door",
        action="store_true",
        help="the watchers watch at the audience replicas' spectators' HTTP doors",
    )
    parser.add_argument(
        "--nice",
        type=int,
        default=AUDIENCE_NICE,
        help="CPU priority the audience replicas give up (PRESIDENT_NICE)",
    )
    parser.add_argument(
        "--watchers-nice",
        type=int,
        default=None,
        help="CPU priority the watchers' process gives up (they stand for devices elsewhere;"
        " default: the audience replicas' --nice)",
    )
    args = parser.parse_args()
    if args.watchers_nice is None:
        args.watchers_nice = args.nice
    watcher_counts = [int(w) for w in args.watchers.split(",")]
    table_counts = [int(t) for t in args.tables.split(",")]
    if not all(0 <= w <= 5000 for w in watcher_counts) or not all(
        1 <= t <= 64 for t in table_counts
    ):
        parser.error("--watchers 0..5000 each, --tables 1..64 each")
    if args.door and not args.audience_replicas:
        parser.error("--door needs --audience-replicas (the doors are theirs)")
    with tempfile.TemporaryDirectory(prefix="audience-bench-") as work:
        workdir = Path(work)
        nats_server = NatsServer(workdir / "nats").start()
        env = {
            "PRESIDENT_TOKEN_SECRET": uuid.uuid4().hex,
            "PRESIDENT_LOG_LEVEL": "warning",
        }
        stack = Stack(
            workdir / "stack",
            f"sqlite:///{workdir / 'president.db'}",
            nats_server.url,
            env,
            audience_replicas=args.audience_replicas,
            audience_nice=args.nice,
        )
        where = (
            f"at {args.audience_replicas} audience replicas"
            + ("' spectators' HTTP doors" if args.door else "")
            if args.audience_replicas
            else "at the players' gateway"
        )
        try:
            stack.start()
            print(
                f"audience bench: {os.cpu_count()} cores, SQLite, 4 bot clients per table on "
                f"Session streams, watchers on Watch streams "
                f"({where}), "
                f"{args.seconds:.0f} s per point; load average at start "
                f"{os.getloadavg()[0]:.2f}",
                flush=True,
            )
            for tables in table_counts:
                for watchers in watcher_counts:
                    uvloop.run(
                        _point(stack, tables, watchers, args.seconds, args.door, args.watchers_nice)
                    )
            uvloop.run(_resume_cost(stack, args.seconds))
        finally:
            stack.stop()
            nats_server.stop()


if __name__ == "__main__":
    main()
