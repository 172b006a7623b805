"""Driving the table service from tests and the benchmark: tables, moves, refusals, JetStream.

Everything goes through the table service's real gRPC API (grpc.aio), the
real store and the real NATS server.
"""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import nats

from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.hosting.streams import stream_id
from president.servicekit.command_stream import CommandStream
from president.servicekit.errors import Code, ServiceError
from president.servicekit.grpc_errors import aio_error_info, code_of
from president.servicekit.launcher import Stack, free_port, wait_healthy
from president.servicekit.nats import message_id
from president.store import EventStore, StoredEvent
from president.table.v1 import table_pb2 as pb
from president.table.v1 import table_pb2_grpc

SERVER = gpb.Actor(player_id="server", seat=-1)
_ids = itertools.count()


def player(seat: int) -> gpb.Actor:
    """The human player of a seat at the test tables."""
    return gpb.Actor(player_id=f"p{seat}", seat=seat)


def command_id(prefix: str = "c") -> str:
    return f"{prefix}-{time.monotonic_ns()}-{next(_ids)}"


@dataclass
class Tables:
    """A client of one table service replica.

    ``streamed``: commands go on one ExecuteCommands stream (as the gateway
    sends them) instead of an ExecuteCommand call each.
    """

    address: str
    channel: Any = None
    stub: Any = None
    streamed: bool = False
    commands: CommandStream | None = None

    async def __aenter__(self) -> Tables:
        # A subchannel of its own: a restarted server is not seen through an old failure.
        self.channel = grpc.aio.insecure_channel(
            self.address, options=[("grpc.use_local_subchannel_pool", 1)]
        )
        self.stub = table_pb2_grpc.TableServiceStub(self.channel)
        if self.streamed:
            self.commands = CommandStream(self.stub.ExecuteCommands)
        return self

    async def __aexit__(self, *_: object) -> None:
        if self.commands is not None:
            await self.commands.close()
        await self.channel.close()

    async def create(
        self,
        preset: str = "classic",
        options: Mapping[str, str] | None = None,
        seats: int = 4,
        visibility: str = "practice",
        **fields: Any,
    ) -> str:
        response = await self.stub.CreateTable(
            pb.CreateTableRequest(
                options=gpb.TableOptions(preset=preset, options=dict(options or {})),
                seat_count=seats,
                visibility=visibility,
                **fields,
            ),
            timeout=30,
        )
        return str(response.table_id)

    async def execute(
        self,
        table_id: str,
        command: gpb.Command,
        actor: gpb.Actor = SERVER,
        cid: str | None = None,
        expected_version: int | None = None,
    ) -> pb.ExecuteCommandResponse:
        request = pb.ExecuteCommandRequest(
            table_id=table_id, command_id=cid or command_id(), actor=actor, command=command
        )
        if expected_version is not None:
            request.expected_version = expected_version
        if self.commands is not None:
            return await self.commands.send(request)
        response: pb.ExecuteCommandResponse = await self.stub.ExecuteCommand(request, timeout=60)
        return response

    async def view(self, table_id: str, seat: int | None = None) -> gpb.TableView:
        request = pb.GetTableRequest(table_id=table_id)
        if seat is not None:
            request.seat = seat
        response = await self.stub.GetTable(request, timeout=30)
        return response.view

    async def bot_table(
        self,
        humans: tuple[int, ...] = (0,),
        seats: int = 4,
        preset: str = "classic",
        options: Mapping[str, str] | None = None,
    ) -> str:
        """A practice table: ``humans`` seats for players p<seat>, bots (bot:basic) elsewhere;
        started."""
        table_id = await self.create(preset, options or {"game_end": "rounds:2"}, seats)
        for seat in range(seats):
            human = seat in humans
            sit = gpb.SitDown(
                seat=seat, player_id=f"p{seat}" if human else "bot:basic", is_bot=not human
            )
            await self.execute(table_id, gpb.Command(sit_down=sit))
        await self.execute(table_id, gpb.Command(start_game=gpb.StartGame()))
        return table_id

    async def next_move(self, table_id: str, seat: int) -> tuple[gpb.Command, gpb.Actor] | None:
        """What the seat (or the server between rounds) does next; None when the game is over."""
        view = await self.view(table_id, seat)
        if view.phase == "game_over":
            return None
        if view.phase == "between_rounds":
            return gpb.Command(next_round=gpb.NextRound()), SERVER
        return move_from(view, seat), player(seat)

    async def play_to_end(self, table_id: str, seat: int, max_moves: int = 2_000) -> int:
        """Play ``seat`` from its legal actions until the game is over; returns the moves."""
        for moves in range(max_moves):
            step = await self.next_move(table_id, seat)
            if step is None:
                return moves
            await self.execute(table_id, step[0], step[1])
        raise AssertionError(f"table {table_id}: no end after {max_moves} moves")


def move_from(view: gpb.TableView, seat: int) -> gpb.Command:
    """A legal move of the seat in this view: the first listed (a play before a pass)."""
    legal = list(view.round.legal)
    if not legal:
        raise AssertionError(f"seat {seat} has nothing to do at version {view.version}: {view}")
    action = legal[0]
    version = view.round.trick_version
    if action.verb == "play":
        return gpb.Command(
            play_cards=gpb.PlayCards(seat=seat, cards=action.cards, trick_version=version)
        )
    if action.verb == "pass":
        return gpb.Command(**{"pass": gpb.Pass(seat=seat, trick_version=version)})
    return gpb.Command(return_cards=gpb.ReturnCards(seat=seat, cards=action.cards))


async def refusal(call: Awaitable[Any]) -> tuple[Code, str, str]:
    """The code, ErrorInfo reason and message of a call that must fail."""
    try:
        await call
    except grpc.aio.AioRpcError as error:
        info = await aio_error_info(error)
        return code_of(error.code()), info.reason if info is not None else "", error.details() or ""
    except ServiceError as error:  # a command refused on an ExecuteCommands stream
        return error.status, error.reason, error.message
    raise AssertionError("the call was accepted")


# --------------------------------------------------------------------------- replicas
@dataclass
class Replica:
    """A second table service process on the same database and NATS."""

    process: subprocess.Popen[bytes]
    address: str
    log: Path
    metrics_port: int = 0

    def plays(self) -> float:
        """president_plays_total of this replica, summed over kinds."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        return sum(
            float(line.split()[-1])
            for line in text.splitlines()
            if line.startswith("president_plays_total{")
        )

    def stop(self, kill: bool = False) -> None:
        if self.process.poll() is None:
            self.process.kill() if kill else self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_replica(
    stack: Stack, name: str = "table-2", env: Mapping[str, str] | None = None
) -> Replica:
    """Another table service process beside the stack's, on its own port."""
    environment = stack.base_env()
    port, metrics_port = free_port(), free_port()
    environment.update(
        PRESIDENT_TABLE_PORT=str(port), PRESIDENT_METRICS_PORT=str(metrics_port), **dict(env or {})
    )
    log = stack.workdir / f"{name}.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "president.services.table.main"],
        env=environment,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )
    address = f"127.0.0.1:{port}"
    wait_healthy(address, 60, process)
    return Replica(process, address, log, metrics_port)


# --------------------------------------------------------------------------- store and JetStream
def stored_events(database_url: str) -> list[StoredEvent]:
    """Every event in the store, stream by stream in version order.

    Streams are read whole: on PostgreSQL the global order shows an event
    only once older transactions (anyone's, on the same server) have ended.
    """
    with EventStore.from_url(database_url) as store:
        streams: dict[str, None] = {}
        after = None
        while True:
            batch = store.read_all(after, 5_000)
            streams.update(dict.fromkeys(e.stream_id for e in batch))
            if len(batch) < 5_000:
                break
            after = batch[-1].position
        return [event for stream in streams for event in store.read_stream(stream)]


def table_events(database_url: str, table_id: str) -> list[StoredEvent]:
    """One table's events, in version order."""
    with EventStore.from_url(database_url) as store:
        return store.read_stream(stream_id(table_id))


@dataclass
class Published:
    """What the JetStream stream holds."""

    ids: list[str] = field(default_factory=list)
    envelopes: list[epb.EventEnvelope] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)


async def stream_count(nats_url: str, stream: str) -> int:
    client = await nats.connect(nats_url, connect_timeout=5)
    try:
        info = await client.jetstream().stream_info(stream)
        return int(info.state.messages)
    except Exception:
        return 0
    finally:
        await client.close()


async def published(nats_url: str, stream: str) -> Published:
    """Every message of the stream, in stream order."""
    client = await nats.connect(nats_url, connect_timeout=5)
    out = Published()
    try:
        js = client.jetstream()
        info = await js.stream_info(stream)
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            message = await js.get_msg(stream, seq)
            out.ids.append((message.headers or {}).get("Nats-Msg-Id", ""))
            out.envelopes.append(epb.EventEnvelope.FromString(message.data or b""))
            out.subjects.append(message.subject or "")
    finally:
        await client.close()
    return out


async def wait_relayed(nats_url: str, stream: str, database_url: str, timeout: float = 30) -> int:
    """Wait until JetStream holds as many messages as the store has events; returns the count."""
    deadline = time.monotonic() + timeout
    while True:
        expected = len(await asyncio.to_thread(stored_events, database_url))
        count = await stream_count(nats_url, stream)
        if count >= expected:
            return expected
        if time.monotonic() > deadline:
            raise AssertionError(f"JetStream holds {count} of {expected} stored events")
        await asyncio.sleep(0.1)


async def check_exactly_once(
    nats_url: str, stream: str, database_url: str, subject_prefix: str
) -> int:
    """Every stored event is in the stream exactly once, with its Msg-Id, in order per table."""
    await wait_relayed(nats_url, stream, database_url)
    # A stack's tables may still be appending (another test's game, played by
    # the timer). So the store is read before and after the stream: every
    # event stored before must be in the stream, and everything in the stream
    # must be stored after. Read until the stream has caught up.
    deadline = time.monotonic() + 30
    while True:
        before = await asyncio.to_thread(stored_events, database_url)
        sent = await published(nats_url, stream)
        events = await asyncio.to_thread(stored_events, database_url)
        unsent = {message_id(e.stream_id, e.version, e.hash) for e in before} - set(sent.ids)
        if not unsent or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert len(sent.ids) == len(set(sent.ids)), "a message was published twice"
    stray = set(sent.ids) - {message_id(e.stream_id, e.version, e.hash) for e in events}
    assert not unsent and not stray, (
        f"the stream and the store differ: {len(unsent)} stored events unpublished "
        f"(e.g. {sorted(unsent)[:3]}), {len(stray)} published events not stored "
        f"(e.g. {sorted(stray)[:3]})"
    )
    by_id = {message_id(e.stream_id, e.version, e.hash): e for e in events}
    last: dict[str, int] = {}
    for sent_id, envelope, subject in zip(sent.ids, sent.envelopes, sent.subjects, strict=True):
        stored = by_id[sent_id]
        assert (envelope.stream_id, envelope.version) == (stored.stream_id, stored.version)
        assert envelope.payload == stored.payload and envelope.hash == stored.hash
        assert subject == f"{subject_prefix}.{stored.stream_id.removeprefix('table-')}"
        assert envelope.version == last.get(envelope.stream_id, 0) + 1, "out of order"
        last[envelope.stream_id] = envelope.version
    return len(events)


async def delete_bucket(nats_url: str, bucket: str) -> None:
    """Remove a key-value bucket (the leases of a test stack)."""
    client = await nats.connect(nats_url, connect_timeout=5)
    try:
        await client.jetstream().delete_key_value(bucket)
    except Exception:
        pass
    finally:
        await client.close()
