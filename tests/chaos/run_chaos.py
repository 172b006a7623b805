"""``make chaos``: tables of bot clients through the gateway while one fault strikes.

For each fault, a stack of its own (the five services, table leases with two
replicas where the fault says so) on a PostgreSQL and a NATS server this
script starts (never the machine's shared ones), ``--tables`` tables of two
seat-bot clients and two server bots each, playing through the gateway; the
fault strikes ``--fault-at`` seconds in, the load runs ``--seconds`` in all.
Then it checks: plays that got an OK answer are stored once each (lost,
duplicated), every watcher's stream is in order without repeats, JetStream
holds each table's events in order as the store does, scoring's finished
games equal a recompute from the store, the audit verifies every table, and
no table stood still longer than ``--stuck`` seconds. Three times are printed:
how long the struck process or server was away (``back_s``: its downtime,
then its start-up until it answered its health check, or accepted
connections, again), the longest pause of any table from a second before
the fault (``pause_s``: it includes ``back_s``), and the longest pause of
any table after the process or server was back (``after_s``: the recovery
itself). One table of results; the exit code is non-zero on
any loss, duplicate, disorder, mismatch, failed audit or stuck table.

    .venv/bin/python tests/chaos/run_chaos.py [--only nats,dealer] [--tables 4]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
# pg_ctl is started (as another user) while gRPC's threads run: without this, gRPC's
# fork handlers now and then crash the child before it runs pg_ctl.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

import grpc  # noqa: E402
import nats  # noqa: E402

from president import audit  # noqa: E402
from president.client import GatewayClient, GatewayError, SeatLog, play_seat  # noqa: E402
from president.hosting.streams import stream_id  # noqa: E402
from president.scoring.v1 import scoring_pb2 as spb  # noqa: E402
from president.scoring.v1 import scoring_pb2_grpc  # noqa: E402
from president.servicekit.launcher import NatsServer, Stack  # noqa: E402
from president.servicekit.nats import envelope  # noqa: E402
from president.services.gateway.calls.commands import scoped_command_id  # noqa: E402
from president.services.scoring.store import ScoringStore  # noqa: E402
from president.store import EventStore, StoredEvent, migrate  # noqa: E402
from tests.support.private_postgres import PrivatePostgres  # noqa: E402
from tests.support.servers import isolated_env  # noqa: E402

#: How long a killed service or server stays down before it is started again.
DOWN_SECONDS = 3.0
#: How long PostgreSQL stays down.
POSTGRES_DOWN_SECONDS = 5.0


class RecordingClient(GatewayClient):
    """A gateway client that notes the command id of every command answered OK."""

    accepted: list[str]

    def note(self, command_id: str) -> None:
        if not hasattr(self, "accepted"):
            self.accepted = []
        self.accepted.append(command_id)

    async def play(
        self, cards: Sequence[str], trick_version: int | None = None, command_id: str = ""
    ) -> int:
        version = await super().play(cards, trick_version, command_id)
        self.note(command_id)
        return version

    async def pass_(self, trick_version: int | None = None, command_id: str = "") -> int:
        version = await super().pass_(trick_version, command_id)
        self.note(command_id)
        return version

    async def return_cards(self, cards: Sequence[str], command_id: str = "") -> int:
        version = await super().return_cards(cards, command_id)
        self.note(command_id)
        return version

    async def host_action(self, choice: str, command_id: str = "") -> int:
        version = await super().host_action(choice, command_id)
        self.note(command_id)
        return version


@dataclass
class Fault:
    """One fault: its name, the replicas it needs, and what it does to the running stack."""

    name: str
    replicas: int
    strike: Callable[[Stack, NatsServer, PrivatePostgres], None]


def _kill_and_restart(service: str) -> Callable[[Stack, NatsServer, PrivatePostgres], None]:
    def strike(stack: Stack, _nats: NatsServer, _pg: PrivatePostgres) -> None:
        stack.stop_one(service, kill=True)
        time.sleep(DOWN_SECONDS)
        stack.start_one(service)

    return strike


def _nats_kill(stack: Stack, server: NatsServer, _pg: PrivatePostgres) -> None:
    assert server.process is not None
    server.process.kill()
    server.process.wait()
    time.sleep(DOWN_SECONDS)
    server.start()


def _postgres(kill: bool) -> Callable[[Stack, NatsServer, PrivatePostgres], None]:
    def strike(_stack: Stack, _nats: NatsServer, pg: PrivatePostgres) -> None:
        pg.kill() if kill else pg.stop()
        time.sleep(POSTGRES_DOWN_SECONDS)
        pg.start()

    return strike


FAULTS = [
    Fault("table (no leases)", 1, _kill_and_restart("table")),
    Fault("table (leases, 2)", 2, _kill_and_restart("table")),
    Fault("gateway", 1, _kill_and_restart("gateway")),
    Fault("dealer", 1, _kill_and_restart("dealer")),
    Fault("timer", 1, _kill_and_restart("timer")),
    Fault("scoring", 1, _kill_and_restart("scoring")),
    Fault("nats kill -9", 1, _nats_kill),
    Fault("postgres stop", 1, _postgres(kill=False)),
    Fault("postgres kill -9", 1, _postgres(kill=True)),
]


@dataclass
class Seat:
    client: RecordingClient
    #: One log per watch of a game (each begins with a snapshot).
    logs: list[SeatLog] = field(default_factory=list)


@dataclass
class TableLoad:
    """One table: its seat clients and when the host saw each change."""

    table_id: str
    seats: list[Seat]
    changes: list[float] = field(default_factory=list)
    game_over: bool = False


@dataclass
class Row:
    fault: str
    accepted: int = 0
    lost: int = 0
    duplicated: int = 0
    disorder: int = 0
    jetstream: int = 0
    scoring: int = 0
    audit: int = 0
    stuck: int = 0
    pause: float = 0.0
    #: From the strike until the struck process or server was back (down, then start-up).
    back: float = 0.0
    #: The longest pause of any table after the struck process or server was back.
    after: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        bad = (self.lost, self.duplicated, self.disorder, self.jetstream, self.scoring)
        return not any(bad) and not self.audit and not self.stuck


async def _seat_up(address: str, index: int) -> TableLoad:
    host = RecordingClient.connect(address)
    await host.create_table(
        "house",
        options={"game_end": "rounds:3"},
        seat_count=4,
        visibility="private",
        display_name=f"Host{index}",
    )
    guest = RecordingClient.connect(address)
    await guest.join(host.table_id, f"Guest{index}")
    view = await host.get_table()
    for _ in range(sum(not seat.occupied for seat in view.seats)):
        await host.add_bot()
    await host.start()
    return TableLoad(host.table_id, [Seat(host), Seat(guest)])


async def _play(load: TableLoad, seat: Seat, host: bool, until: float) -> None:
    """Play game after game until ``until`` (the host starts each next game)."""

    def seen(_change: Any) -> None:
        if host:
            load.changes.append(time.monotonic())

    while time.monotonic() < until:
        log = SeatLog()
        seat.logs.append(log)
        try:
            await play_seat(seat.client, host_rounds=3 if host else None, on_change=seen, log=log)
        except GatewayError as error:  # not one a client resends: noted, then again
            log.refused[error.reason] = log.refused.get(error.reason, 0) + 1
            await asyncio.sleep(0.5)
            continue
        view = log.last_view
        if host and view is not None and view.phase == "game_over":
            load.game_over = True
            with contextlib.suppress(GatewayError):
                await seat.client.host_action("play_again", f"again-{view.version}")
        await asyncio.sleep(0.2)


async def _load(
    stack: Stack, fault: Fault, nats_server: NatsServer, pg: PrivatePostgres, args: Any
) -> tuple[list[TableLoad], float, float, float]:
    loads = [await _seat_up(stack.gateway, n) for n in range(args.tables)]
    started = time.monotonic()
    until = started + args.seconds
    tasks = [
        asyncio.create_task(_play(load, seat, index == 0, until))
        for load in loads
        for index, seat in enumerate(load.seats)
    ]
    await asyncio.sleep(args.fault_at)
    struck = time.monotonic()
    await asyncio.to_thread(fault.strike, stack, nats_server, pg)
    back = time.monotonic()  # the strike returns once the process or server is up again
    await asyncio.sleep(max(0.0, until - time.monotonic()))
    ended = time.monotonic()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for load in loads:
        for seat in load.seats:
            await seat.client.close()
    return loads, struck, back, ended


def _groups(events: list[StoredEvent]) -> dict[str, int]:
    """How many commands each command id began in the log."""
    counts: dict[str, int] = {}
    previous = None
    for stored in events:
        if stored.command_id != previous:
            counts[stored.command_id] = counts.get(stored.command_id, 0) + 1
        previous = stored.command_id
    return counts


async def _jetstream_versions(url: str, subject: str, count: int) -> list[int]:
    client = await nats.connect(url)
    try:
        subscription = await client.jetstream().subscribe(subject, ordered_consumer=True)
        versions: list[int] = []
        with contextlib.suppress(Exception):
            while len(versions) < count:
                message = await subscription.next_msg(timeout=2)
                versions.append(int(message.headers["Nats-Msg-Id"].rsplit(":", 1)[1]))
        await subscription.unsubscribe()
        return versions
    finally:
        await client.close()


def _scoring_games(address: str, table_id: str) -> list[tuple[Any, ...]]:
    with grpc.insecure_channel(address) as channel:
        stub = scoring_pb2_grpc.ScoringServiceStub(channel)
        try:
            response = stub.GetGameResults(spb.GetGameResultsRequest(table_id=table_id), timeout=5)
        except grpc.RpcError:
            return []
    return [
        (g.game_no, tuple(g.winners), g.stopped, tuple(g.totals), g.rounds) for g in response.games
    ]


def _recomputed(events: list[StoredEvent], workdir: Path, table_id: str) -> list[tuple[Any, ...]]:
    url = f"sqlite:///{workdir / f'recompute-{table_id}.db'}"
    migrate(url)
    store = ScoringStore(url)
    store.apply_batch([envelope(stored) for stored in events])
    return [
        (g.game_no, tuple(g.winners), g.stopped, tuple(g.totals), g.rounds)
        for g in store.games(table_id)
    ]


def _check(row: Row, stack: Stack, loads: list[TableLoad], url: str, args: Any) -> None:
    subjects_prefix = stack.env["PRESIDENT_SUBJECT_PREFIX"]
    with EventStore.from_url(url) as store:
        for load in loads:
            events = store.read_stream(stream_id(load.table_id))
            groups = _groups(events)
            for seat in load.seats:
                for command_id in getattr(seat.client, "accepted", []):
                    row.accepted += 1
                    stored_as = scoped_command_id(seat.client.player_id, load.table_id, command_id)
                    found = groups.get(stored_as, 0)
                    row.lost += found == 0
                    row.duplicated += found > 1
                for log in seat.logs:
                    versions = [response.version for response in log.responses]
                    row.disorder += sum(1 for a, b in itertools.pairwise(versions) if b <= a)
            report = audit.verify_table(events)
            if not report.ok:
                row.audit += 1
                row.notes.append(f"audit {load.table_id}: {report.problem}")
            subject = f"{subjects_prefix}.{load.table_id}"
            deadline = time.monotonic() + 30
            while True:
                published = asyncio.run(_jetstream_versions(stack.nats_url, subject, len(events)))
                if published == [e.version for e in events] or time.monotonic() > deadline:
                    break
                time.sleep(1)
            if published != [e.version for e in events]:
                row.jetstream += 1
                row.notes.append(
                    f"jetstream {load.table_id}: {len(published)} of {len(events)} in order"
                )
            expected = _recomputed(events, Path(args.workdir), load.table_id)
            deadline = time.monotonic() + 30
            while (got := _scoring_games(stack.address("scoring"), load.table_id)) != expected:
                if time.monotonic() > deadline:
                    row.scoring += 1
                    row.notes.append(f"scoring {load.table_id}: {got} != {expected}")
                    break
                time.sleep(1)


def _longest_gap(changes: list[float], since: float, ended: float) -> float:
    """The longest time between two changes (or ``since``, or ``ended``) from ``since`` on."""
    marks = [since, *(t for t in changes if t >= since), ended]
    return max(b - a for a, b in itertools.pairwise(marks))


def _pauses(
    row: Row, loads: list[TableLoad], struck: float, back: float, ended: float, args: Any
) -> None:
    row.back = back - struck
    for load in loads:
        longest = _longest_gap(load.changes, struck - 1.0, ended)
        row.pause = max(row.pause, longest)
        row.after = max(row.after, _longest_gap(load.changes, back, ended))
        if longest > args.stuck:
            row.stuck += 1
            refused = [log.refused for seat in load.seats for log in seat.logs if log.refused]
            last = load.seats[0].logs[-1].last_view if load.seats[0].logs else None
            phase = last.phase if last is not None else "?"
            row.notes.append(
                f"stuck {load.table_id}: {longest:.1f} s without a change "
                f"(host saw {phase}; refused {refused})"
            )


def run_fault(fault: Fault, args: Any, workdir: Path) -> Row:
    row = Row(fault.name)
    pg = PrivatePostgres()
    nats_server = NatsServer(workdir / "nats").start()
    stack: Stack | None = None
    try:
        url = pg.create_database("chaos")
        migrate(url)
        stack = Stack(workdir / "stack", url, nats_server.url, isolated_env())
        stack.table_replicas = fault.replicas
        stack.start()
        loads, struck, back, ended = asyncio.run(_load(stack, fault, nats_server, pg, args))
        _pauses(row, loads, struck, back, ended, args)
        _check(row, stack, loads, url, args)
    except Exception as error:
        row.audit += 1
        row.notes.append(f"the run failed: {error!r}")
    finally:
        if stack is not None:
            stack.stop()
        nats_server.stop()
        pg.close()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=4, help="tables of bot clients")
    parser.add_argument("--seconds", type=float, default=30.0, help="load per fault")
    parser.add_argument("--fault-at", type=float, default=8.0, help="when the fault strikes")
    parser.add_argument("--stuck", type=float, default=20.0, help="a pause longer is stuck")
    parser.add_argument("--only", default="", help="comma-separated words of fault names")
    parser.add_argument("--keep", default="", help="keep the stacks' logs under this directory")
    args = parser.parse_args(argv)
    words = [word for word in args.only.split(",") if word]
    chosen = [f for f in FAULTS if not words or any(w in f.name for w in words)]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="president-chaos-") as temporary:
        directory = args.keep or temporary
        Path(directory).mkdir(parents=True, exist_ok=True)
        args.workdir = directory
        for fault in chosen:
            print(f"== {fault.name} ...", flush=True)
            workdir = Path(directory) / uuid.uuid4().hex[:8]
            workdir.mkdir()
            rows.append(run_fault(fault, args, workdir))
            for note in rows[-1].notes:
                print(f"   {note}", flush=True)
    header = (
        "fault                accepted lost dup order js scoring audit stuck back_s pause_s after_s"
    )
    print(header)
    for row in rows:
        print(
            f"{row.fault:<20} {row.accepted:>8} {row.lost:>4} {row.duplicated:>3} "
            f"{row.disorder:>5} {row.jetstream:>2} {row.scoring:>7} {row.audit:>5} "
            f"{row.stuck:>5} {row.back:>6.1f} {row.pause:>7.1f} {row.after:>7.1f}"
        )
    worst = max(rows, key=lambda r: r.pause) if rows else None
    if worst is not None:
        print(f"longest pause: {worst.pause:.1f} s ({worst.fault})")
        latest = max(rows, key=lambda r: r.after)
        print(
            f"longest pause after the fault's process was back: {latest.after:.1f} s "
            f"({latest.fault})"
        )
    failed = [row.fault for row in rows if not row.ok]
    print("chaos: " + ("OK" if not failed else "FAILED: " + ", ".join(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
