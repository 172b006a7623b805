"""What one change costs each way of streaming it to N spectators: CPU per change and per write.

Four servers of the same ``Watch``, each in a process of its own, fed the
same table's changes by the gateway's own feed (:class:`FeedHub` over a
SQLite store: a house game of four seats played ahead, its events offered
one by one at ``--rate`` changes a second, as a command's answer offers them):

- ``door``: the audience replica's hand-written HTTP door (h11, ``AudienceDoor``:
  its crowd, a ``Broadcast``, frames a flush once and writes the same bytes to every socket);
- ``connect``: the same fan-out as gRPC ``Watch`` (the audience's paced log,
  ``watch.watch`` with ``batched``), served as a Connect server stream by
  connectrpc's ASGI application under uvicorn, the bytes passed through
  (no serialization per stream);
- ``grpc``: ``watch.watch`` served by grpc.aio (the gateway's pre-serialized
  bytes, as ``PreSerialized`` lets it);
- ``edge``: the web edge itself (``python -m president.services.web.main``)
  in front of the ``grpc`` server, each spectator's stream forwarded as the
  edge forwards a browser's: measured is the edge's own process;
- ``connect-fanout``, ``grpc-fanout``: ``connect`` and ``grpc`` with the
  one fan-out (:mod:`president.services.gateway.streams.fanout`, a
  ``Mailbox`` per stream, flushed at the audience's pace) instead of
  ``watch.watch``.

Every stream opens as ``Watch`` does (a bearer token verified, a stream slot,
its rights re-checked while open). The spectators run in one more process,
reading the light way (only a message's version, ``skipped`` and
``changes``). Measured with each process's CPU time from ``/proc`` (user +
system, not wall time: the machine is shared), first with no spectator (the
feed's own cost), then with ``--watchers`` spectators; printed per mode:

- the server's CPU per change with no spectator, and with them;
- the CPU the spectators add, per change delivered to one spectator
  (``(with - without) / changes delivered``) and per socket write;
- for ``edge``, the edge's CPU per change delivered and per write, and the
  upstream gRPC server's beside it.

Modes alternate within each of ``--rounds`` rounds. Asserts nothing.

Run: ``.venv/bin/python tests/benchmarks/connect_bench.py [--watchers 200] [--rate 25]
[--changes 200] [--rounds 3] [--modes door,connect,grpc,edge]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "tests" / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import grpc  # noqa: E402
import uvloop  # noqa: E402

from president.gateway.v1 import gateway_pb2 as pb  # noqa: E402

TABLE = "bench"
WATCH = "/president.gateway.v1.GatewayService/Watch"
MODES = ("door", "connect", "grpc", "edge", "connect-fanout", "grpc-fanout")
#: The feed starts here (the game started); every later event is offered live.
START_VERSION = 12
#: Rounds of the house game played ahead (about 75 events each).
ROUNDS_AHEAD = 14
#: After the last change is offered: time for the last flush or paced waking to go out.
SETTLE_SECONDS = 1.0
STREAMS_PER_CHANNEL = 100
LIMITS = {
    "PRESIDENT_STREAMS_PER_IDENTITY": "1000000",
    "PRESIDENT_STREAMS_PER_PEER": "1000000",
    "PRESIDENT_LIMITS_SCALE": "100000",
}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- the table, played ahead once --------------------------------------------------------
def play_ahead(db: Path) -> int:
    """A house table of a human and three bots, ``ROUNDS_AHEAD`` rounds played, in a SQLite
    store at ``db``; its last version."""
    from president.hosting.dealer import LocalDealer
    from president.hosting.host import TableHost
    from president.hosting.streams import stream_id
    from president.rules import bots
    from president.rules import game as g
    from president.rules.options import options_for
    from president.store import EventStore

    store = EventStore.from_url(f"sqlite:///{db}", migrate=True)
    host = TableHost(store, LocalDealer())
    host.create(TABLE, options_for("house"), seat_count=4, host_player_id="p0")
    host.decide_and_append(TABLE, g.SitDown(0, "p0", False, "Ada"), "sit-0", "p0")
    for seat in range(1, 4):
        host.decide_and_append(TABLE, g.SitDown(seat, f"bot-{seat}", True), f"sit-{seat}", "p0")
    host.decide_and_append(TABLE, g.StartGame(), "start", "p0")
    for round_number in range(ROUNDS_AHEAD):
        if round_number:
            host.decide_and_append(TABLE, g.NextRound(), f"next-{round_number}", "p0")
        while True:
            table = host.load(TABLE)
            state = table.game.round
            if state is None or table.game.phase != g.GamePhase.ROUND:
                break
            command = bots.choose_action(state, 0)
            if command is None:
                break
            host.decide_and_append(TABLE, command, f"human-v{table.version}", "p0")
    return store.current_version(stream_id(TABLE))


# -- the server process -------------------------------------------------------------------
class CappedTables:
    """The gateway's table port over the store, showing events up to ``visible`` only (the
    rest are offered one by one, as commands' answers offer them)."""

    def __init__(self, db: Path, visible: int) -> None:
        from president.store import EventStore

        self.store = EventStore.from_url(f"sqlite:///{db}")
        self.visible = visible

    async def read_events(self, table_id: str, after: int, limit: int = 0) -> list[Any]:
        from president.hosting.streams import stream_id
        from president.servicekit.nats import envelope

        stored = self.store.read_stream(stream_id(table_id), after + 1)
        return [envelope(event) for event in stored if event.version <= self.visible]

    def all_after(self, version: int) -> list[Any]:
        from president.hosting.streams import stream_id
        from president.servicekit.nats import envelope

        return [envelope(event) for event in self.store.read_stream(stream_id(TABLE), version + 1)]


class PassThrough:
    """Connect's binary codec, passing bytes a handler serialized itself as they are."""

    def name(self) -> str:
        return "proto"

    def encode(self, message: Any) -> bytes:
        return message if isinstance(message, bytes) else bytes(message.SerializeToString())

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        return message_class.FromString(bytes(data))


async def serve(mode: str, db: Path, port: int, secret: str) -> None:
    """One server of ``mode`` on ``port``; commands on stdin: ``emit N RATE``, ``counts``."""
    from president.servicekit.identity import AccessTokens
    from president.servicekit.nats import Subjects
    from president.servicekit.stream_limits import StreamLimits
    from president.services.gateway.api.audience_http import AudienceDoor, SpectatorStream
    from president.services.gateway.identity.auth import Verifier, bearer
    from president.services.gateway.identity.revocations import Revocations
    from president.services.gateway.limits.admission import Admission
    from president.services.gateway.limits.rate_limits import RateLimits
    from president.services.gateway.streams.audience import WRITES_PER_SECOND
    from president.services.gateway.streams.fanout import Broadcast, Mailbox, Policy, start_at
    from president.services.gateway.streams.feed import FeedHub
    from president.services.gateway.streams.watch import BATCHED_WATCH, seat_resolver, watch

    tables = CappedTables(db, START_VERSION)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed(TABLE)
    ahead = tables.all_after(START_VERSION)
    verifier = Verifier(AccessTokens(secret), Revocations())
    admission = Admission(RateLimits.from_env(LIMITS), StreamLimits.from_env(LIMITS))
    counts = {"writes": 0, "streams": 0}
    loop = asyncio.get_running_loop()

    async def stream(request: pb.WatchRequest, token: str, peer: str) -> AsyncIterator[bytes]:
        """``Watch`` for a spectator, as the gateway's handler opens it."""
        identity = verifier.verify(token)
        with admission.stream(peer, identity.account_id):
            counts["streams"] += 1
            async for message in watch(
                hub,
                request.table_id,
                request.from_version,
                seat_resolver(identity.account_id),
                batched=request.batched,
                check=lambda: verifier.check(identity),
            ):
                counts["writes"] += 1
                yield message

    broadcast = Broadcast(feed, pace=lambda: len(broadcast.subscribers) / WRITES_PER_SECOND)
    if mode.endswith("-fanout"):  # the feed's spectators' changes broadcast, paced
        feed.crowds.append(broadcast)

    async def fanned_out(request: pb.WatchRequest, token: str, peer: str) -> AsyncIterator[bytes]:
        """``Watch`` for a spectator through the proposed one fan-out (a pull stream)."""
        identity = verifier.verify(token)
        with admission.stream(peer, identity.account_id):
            counts["streams"] += 1
            box = Mailbox(lambda _table: None, BATCHED_WATCH, Policy.NEWEST)
            assert feed.current is not None
            broadcast.join(box, start_at(feed.current, feed.history, request.from_version, 512))
            try:
                while taken := await box.wait():
                    verifier.check(identity)
                    for message in taken:
                        counts["writes"] += 1
                        yield message
            finally:
                broadcast.leave(box)

    open_stream = fanned_out if mode.endswith("-fanout") else stream
    stopping: list[Any] = []
    transport = mode.removesuffix("-fanout")
    if mode == "door":
        door = AudienceDoor(hub, verifier, admission)
        offer = SpectatorStream.offer

        def counted(self: SpectatorStream, write: list[bytes]) -> bool:
            taken = offer(self, write)
            counts["writes"] += taken
            return taken

        SpectatorStream.offer = counted  # type: ignore[method-assign]
        ready = asyncio.Event()
        task = asyncio.create_task(door.serve("127.0.0.1", port, ready))
        stopping.append(task.cancel)
        await ready.wait()
    elif transport == "grpc":

        async def handler(request: pb.WatchRequest, context: Any) -> AsyncIterator[bytes]:
            # grpc.aio streams from an async generator function only
            async for message in open_stream(
                request, bearer(context.invocation_metadata()), context.peer()
            ):
                yield message

        method = grpc.unary_stream_rpc_method_handler(
            handler,
            request_deserializer=pb.WatchRequest.FromString,
            response_serializer=lambda message: message,
        )
        server = grpc.aio.server()
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("president.gateway.v1.GatewayService",
                                                  {"Watch": method}),)
        )  # fmt: skip
        server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        stopping.append(lambda: None)
    else:
        import uvicorn
        from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
        from connectrpc.server import ConnectASGIApplication, Endpoint

        info = MethodInfo(
            name="Watch",
            service_name="president.gateway.v1.GatewayService",
            input=pb.WatchRequest,
            output=pb.WatchResponse,
            idempotency_level=IdempotencyLevel.UNKNOWN,
            stream_type=StreamType.SERVER_STREAM,
        )

        def connect_handler(request: pb.WatchRequest, ctx: Any) -> AsyncIterator[bytes]:
            authorization = ctx.request_headers.get("authorization")
            token = bearer([("authorization", authorization)] if authorization else [])
            return open_stream(request, token, ctx.client_address or "")

        class WatchApplication(ConnectASGIApplication[object]):
            @property
            def path(self) -> str:
                return "/president.gateway.v1.GatewayService"

        app = WatchApplication(
            service=object(),
            endpoints=lambda _service: {WATCH: Endpoint.server_stream(info, connect_handler)},
            codecs=[PassThrough()],
        )
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=port,
            lifespan="off",
            log_config=None,
            access_log=False,
            server_header=False,
            loop="none",
        )
        server_task = asyncio.create_task(uvicorn.Server(config).serve())
        stopping.append(server_task.cancel)
        while True:  # listening once it accepts
            try:
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.05)
    print("@@ ready", flush=True)
    offered = 0
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        words = line.split()
        if not words:
            break
        if words[0] == "emit":
            count, rate = int(words[1]), float(words[2])
            started = time.perf_counter()
            for n in range(count):
                envelope = ahead[offered]
                offered += 1
                tables.visible = envelope.version
                feed.offer([envelope])
                delay = started + (n + 1) / rate - time.perf_counter()
                await asyncio.sleep(max(0.0, delay))
            print(f"@@ emitted {feed.version}", flush=True)
        elif words[0] == "counts":
            print("@@ " + json.dumps(counts), flush=True)
            counts["writes"] = 0
    for stop in stopping:
        stop()


# -- the spectators' process --------------------------------------------------------------
class HttpReader(asyncio.Protocol):
    """One spectator's Connect stream over HTTP/1.1, chunked: each message's version,
    ``skipped`` and ``changes`` read, nothing else."""

    def __init__(self, light: Any, tally: dict[str, int], ready: asyncio.Semaphore) -> None:
        self._light = light
        self._tally = tally
        self._ready: asyncio.Semaphore | None = ready
        self._raw = b""
        self._body = b""
        self._headed = False
        self.version = 0

    def data_received(self, data: bytes) -> None:
        tally = self._tally
        tally["reads"] += 1
        raw = self._raw + data
        at = 0
        if not self._headed:
            head = raw.find(b"\r\n\r\n")
            if head < 0:
                self._raw = raw
                return
            self._headed, at = True, head + 4
        body = self._body
        while True:  # de-chunk
            line = raw.find(b"\r\n", at)
            if line < 0:
                break
            size = int(raw[at:line], 16)
            if len(raw) < line + 2 + size + 2:
                break
            body += raw[line + 2 : line + 2 + size]
            at = line + 2 + size + 2
        self._raw = raw[at:]
        light = self._light
        inner = 0
        while len(body) - inner >= 5:
            flags, length = struct.unpack_from(">BI", body, inner)
            if len(body) - inner < 5 + length:
                break
            if flags & 0x02:
                tally["ended"] += 1
                inner = len(body)
                break
            message = light.FromString(body[inner + 5 : inner + 5 + length])
            tally["messages"] += 1
            for change in message.changes or (message,):
                tally["changes"] += 1
                tally["skipped"] += change.skipped
                self.version = max(self.version, change.version)
            inner += 5 + length
        self._body = body[inner:]
        if self._ready is not None and self.version:
            self._ready.release()
            self._ready = None


async def read(kind: str, address: str, token: str, watchers: int) -> None:
    """``watchers`` spectators at ``address``; commands on stdin: ``reset``, ``report``."""
    from audience_bench import light_watch_message

    light = light_watch_message()
    tally = {"reads": 0, "messages": 0, "changes": 0, "skipped": 0, "ended": 0}
    ready = asyncio.Semaphore(0)
    versions: list[Any] = []
    channels: list[grpc.aio.Channel] = []
    tasks: list[asyncio.Task[None]] = []
    loop = asyncio.get_running_loop()
    request = pb.WatchRequest(table_id=TABLE, batched=True).SerializeToString()

    async def over_grpc(call: Any, holder: list[int]) -> None:
        first = True
        async for message in call(
            pb.WatchRequest(table_id=TABLE, batched=True),
            metadata=(("authorization", f"Bearer {token}"),),
        ):
            tally["reads"] += 1
            tally["messages"] += 1
            for change in message.changes or (message,):
                tally["changes"] += 1
                tally["skipped"] += change.skipped
                holder[0] = max(holder[0], change.version)
            if first:
                first = False
                ready.release()

    host, port = address.rsplit(":", 1)
    for n in range(watchers):
        if kind == "grpc":
            if n % STREAMS_PER_CHANNEL == 0:
                channels.append(grpc.aio.insecure_channel(address))
                call = channels[-1].unary_stream(
                    WATCH,
                    request_serializer=pb.WatchRequest.SerializeToString,
                    response_deserializer=light.FromString,
                )
            holder = [0]
            versions.append(holder)
            tasks.append(asyncio.create_task(over_grpc(call, holder)))
        else:
            reader = HttpReader(light, tally, ready)
            versions.append(reader)
            transport, _ = await loop.create_connection(lambda r=reader: r, host, int(port))
            transport.write(
                b"POST " + WATCH.encode() + b" HTTP/1.1\r\nhost: bench\r\n"
                b"content-type: application/connect+proto\r\nconnect-protocol-version: 1\r\n"
                b"authorization: Bearer " + token.encode() + b"\r\n"
                b"content-length: %d\r\n\r\n"
                % (len(request) + 5)
                + struct.pack(">BI", 0, len(request))
                + request
            )
    for _ in range(watchers):
        await ready.acquire()
    print("@@ ready", flush=True)
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        words = line.split()
        if not words:
            break
        if words[0] == "reset":
            for key in tally:
                tally[key] = 0
            print("@@ reset", flush=True)
        elif words[0] == "report":
            held = [v[0] if isinstance(v, list) else v.version for v in versions]
            report = {**tally, "lowest": min(held), "highest": max(held)}
            print("@@ " + json.dumps(report), flush=True)
    for task in tasks:
        task.cancel()
    for channel in channels:
        await channel.close()


# -- the conductor ------------------------------------------------------------------------
class Child:
    """A process spoken to by lines."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            bufsize=1,
        )

    def say(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def hear(self) -> str:
        """The next line said by the protocol (``@@ ``), past any log line."""
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.process.args[2:4]} ended: {self.process.wait()}")
            if line.startswith("@@ "):
                return line[3:].strip()

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.say("")
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(5)


def start_edge(upstream: int, port: int) -> subprocess.Popen[bytes]:
    """The web edge, as deployed, forwarding to the gRPC server on ``upstream``."""
    env = {
        **os.environ,
        "PRESIDENT_GATEWAY_ADDRESS": f"127.0.0.1:{upstream}",
        "PRESIDENT_WEB_PORT": str(port),
        "PRESIDENT_WEB_STATIC_DIR": "/nonexistent",
        "PRESIDENT_LOG_LEVEL": "warning",
        "PRESIDENT_METRICS_PORT": "0",
    }
    edge = subprocess.Popen(
        [sys.executable, "-m", "president.services.web.main"], env=env, stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
            return edge
        time.sleep(0.1)
    edge.terminate()
    raise RuntimeError("the edge did not answer /healthz in 30 s")


def one_run(
    mode: str, db: Path, args: argparse.Namespace, token: str, secret: str
) -> dict[str, float]:
    """One mode's numbers: CPU without and with the spectators, what they received."""
    port = free_port()
    me = [sys.executable, __file__]
    server = Child([*me, "--serve", mode if mode != "edge" else "grpc", str(db), str(port), secret])
    edge: subprocess.Popen[bytes] | None = None
    readers: Child | None = None
    try:
        assert server.hear() == "ready"
        at = f"127.0.0.1:{port}"
        if mode == "edge":
            web = free_port()
            edge = start_edge(port, web)
            at = f"127.0.0.1:{web}"

        def window(count: int) -> tuple[float, float]:
            pids = [server.pid] + ([edge.pid] if edge is not None else [])
            before = [cpu_seconds(pid) for pid in pids]
            server.say(f"emit {count} {args.rate}")
            server.hear()
            time.sleep(SETTLE_SECONDS)
            after = [cpu_seconds(pid) for pid in pids]
            spent = [b - a for a, b in zip(before, after, strict=True)]
            return spent[0], spent[1] if len(spent) > 1 else 0.0

        alone, edge_alone = window(args.changes // 2)
        kind = "grpc" if mode.startswith("grpc") else "http"
        readers = Child([*me, "--read", kind, at, token, str(args.watchers)])
        if readers.hear() != "ready":
            raise RuntimeError("the spectators did not all open")
        time.sleep(0.5)
        server.say("counts")
        server.hear()  # the opening's writes are not counted
        readers.say("reset")
        readers.hear()
        watched, edge_watched = window(args.changes)
        server.say("counts")
        written = json.loads(server.hear())
        readers.say("report")
        seen = json.loads(readers.hear())
    finally:
        for child in (readers, server):
            if child is not None:
                child.stop()
        if edge is not None:
            edge.terminate()
            edge.wait(10)
    per_change_alone = alone / (args.changes // 2)
    extra = watched - per_change_alone * args.changes
    writes = written["writes"] if mode != "edge" else seen["messages"]
    out = {
        "alone_ms": per_change_alone * 1e3,
        "watched_ms": watched / args.changes * 1e3,
        "per_change_us": extra / max(1, seen["changes"]) * 1e6,
        "per_write_us": extra / max(1, writes) * 1e6,
        "changes_per_write": seen["changes"] / max(1, writes),
        "skipped": seen["skipped"],
        "delivered": seen["changes"],
        "writes": writes,
    }
    if mode == "edge":
        edge_extra = edge_watched - edge_alone / (args.changes // 2) * args.changes
        out["edge_per_change_us"] = edge_extra / max(1, seen["changes"]) * 1e6
        out["edge_per_write_us"] = edge_extra / max(1, writes) * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watchers", type=int, default=200, help="spectators per mode")
    parser.add_argument("--rate", type=float, default=25.0, help="changes offered a second")
    parser.add_argument("--changes", type=int, default=200, help="changes measured per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of every mode, alternating")
    parser.add_argument("--modes", default=",".join(MODES), help="a list of " + ", ".join(MODES))
    parser.add_argument("--serve", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--read", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        mode, db, port, secret = args.serve
        uvloop.run(serve(mode, Path(db), int(port), secret))
        return
    if args.read:
        kind, address, token, watchers = args.read
        uvloop.run(read(kind, address, token, int(watchers)))
        return
    modes = args.modes.split(",")
    if not set(modes) <= set(MODES) or not 1 <= args.watchers <= 5000 or args.changes < 2:
        parser.error(f"--modes from {', '.join(MODES)}; --watchers 1..5000; --changes 2 or more")
    from president.servicekit.identity import GUEST, AccessTokens, Identity

    secret = os.urandom(16).hex()
    token = AccessTokens(secret).issue(
        Identity("spectator", "Sam", GUEST, "session-1", int(time.time()) + 3600)
    )
    with tempfile.TemporaryDirectory(prefix="connect-bench-") as work:
        db = Path(work) / "table.db"
        last = play_ahead(db)
        needed = START_VERSION + args.changes + args.changes // 2
        if last < needed:
            raise SystemExit(f"the table has {last} events; a run offers up to {needed}")
        print(
            f"connect bench: {os.cpu_count()} cores, {args.watchers} spectators, "
            f"{args.rate:g} changes/s, {args.changes} changes measured per run, "
            f"load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        results: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
        for round_number in range(args.rounds):
            for mode in modes if round_number % 2 == 0 else reversed(modes):
                got = one_run(mode, db, args, token, secret)
                results[mode].append(got)
                line = (
                    f"  {mode:<8} server alone {got['alone_ms']:.3f} ms/change, watched "
                    f"{got['watched_ms']:.2f} ms/change | +{got['per_change_us']:.1f} µs per "
                    f"change delivered, +{got['per_write_us']:.1f} µs per write "
                    f"({got['changes_per_write']:.2f} changes/write, {int(got['delivered'])} "
                    f"delivered, {int(got['skipped'])} skipped)"
                )
                if mode == "edge":
                    line += (
                        f" | the edge itself: {got['edge_per_change_us']:.1f} µs per change,"
                        f" {got['edge_per_write_us']:.1f} µs per write"
                    )
                print(line + f" | load {os.getloadavg()[0]:.2f}", flush=True)
        print("medians:")
        for mode, runs in results.items():
            keys = ["per_change_us", "per_write_us", "changes_per_write"]
            if mode == "edge":
                keys += ["edge_per_change_us", "edge_per_write_us"]
            medians = ", ".join(
                f"{key} {statistics.median(run[key] for run in runs):.1f}" for key in keys
            )
            print(f"  {mode:<8} {medians}")


if __name__ == "__main__":
    main()
