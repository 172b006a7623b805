"""The chaos runs' checks after a fault, and their one table of results.

Shared by ``make chaos`` and ``make cluster-chaos``: plays that got an OK
answer are stored once each (lost, duplicated), every watcher's stream is in
order without repeats or unmarked gaps, JetStream holds each table's events
in order as the store does, scoring's finished games equal a recompute from
the store, the audit verifies every table, and no table stood still longer
than the bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import nats

from president import audit
from president.events.v1 import events_pb2 as events_pb
from president.hosting.streams import stream_id
from president.scoring.v1 import scoring_pb2 as spb
from president.scoring.v1 import scoring_pb2_grpc
from president.servicekit.nats import envelope, servers
from president.services.gateway.calls.commands import scoped_command_id
from president.services.scoring.store import ScoringStore
from president.store import EventStore, StoredEvent, migrate
from tests.chaos.load import LoadRun, TableLoad


@dataclass
class Where:
    """Where the checks read: the store, NATS, the events' subjects and scoring."""

    database_url: str
    nats_url: str
    subject_prefix: str
    scoring: str
    workdir: Path


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
    #: Losses are this fault's by design (printed, marked ``*``, not failing the run):
    #: plays lost, and JetStream holding what the store lost (scoring reads a rewound
    #: table again from the store, so it must still equal a recompute).
    excused: bool = False

    @property
    def ok(self) -> bool:
        losses = (self.scoring,) if self.excused else (self.lost, self.jetstream, self.scoring)
        bad = (*losses, self.duplicated, self.disorder)
        return not any(bad) and not self.audit and not self.stuck


def groups(events: list[StoredEvent]) -> dict[str, int]:
    """How many commands each command id began in the log."""
    counts: dict[str, int] = {}
    previous = None
    for stored in events:
        if stored.command_id != previous:
            counts[stored.command_id] = counts.get(stored.command_id, 0) + 1
        previous = stored.command_id
    return counts


async def _jetstream_versions(url: str, subject: str, count: int) -> list[tuple[int, str]]:
    """The table's events in JetStream: (version, hash) each, so an event the store no
    longer has under its version (a failover lost it) shows."""
    client = await nats.connect(servers(url))
    try:
        subscription = await client.jetstream().subscribe(subject, ordered_consumer=True)
        versions: list[tuple[int, str]] = []
        with contextlib.suppress(Exception):
            while len(versions) < count:
                message = await subscription.next_msg(timeout=2)
                published = events_pb.EventEnvelope.FromString(message.data)
                versions.append((published.version, published.hash))
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


def out_of_order(responses: list[Any], rewinds: Sequence[int] = ()) -> int:
    """The changes of one watch (resumed across reconnects) that repeat or go back, or skip
    ahead without saying so (a whole view marked ``skipped`` may). A snapshot that begins
    a watch again after its stream ended ``HISTORY_REWOUND`` (at an index in ``rewinds``)
    starts afresh: the versions the store lost come again, told so."""
    return sum(
        1
        for index, (a, b) in enumerate(itertools.pairwise(responses), start=1)
        if not (index in rewinds and b.snapshot)
        and (b.version <= a.version or (b.version > a.version + 1 and not b.skipped))
    )


def check(row: Row, loads: list[TableLoad], where: Where) -> None:
    """Every check but the pauses, counted into ``row``."""
    with EventStore.from_url(where.database_url) as store:
        for load in loads:
            events = store.read_stream(stream_id(load.table_id))
            began = groups(events)
            for seat in load.seats:
                for command_id in getattr(seat.client, "accepted", []):
                    row.accepted += 1
                    stored_as = scoped_command_id(seat.client.player_id, load.table_id, command_id)
                    found = began.get(stored_as, 0)
                    row.lost += found == 0
                    row.duplicated += found > 1
                for log in seat.logs:
                    row.disorder += out_of_order(log.responses, log.rewinds)
            report = audit.verify_table(events)
            if not report.ok:
                row.audit += 1
                row.notes.append(f"audit {load.table_id}: {report.problem}")
            subject = f"{where.subject_prefix}.{load.table_id}"
            deadline = time.monotonic() + 30
            while True:
                published = asyncio.run(_jetstream_versions(where.nats_url, subject, len(events)))
                stored = [(e.version, e.hash) for e in events]
                if published == stored or time.monotonic() > deadline:
                    break
                time.sleep(1)
            if published != stored:
                row.jetstream += 1
                row.notes.append(
                    f"jetstream {load.table_id}: {sum(map(tuple.__eq__, published, stored))} "
                    f"of {len(events)} events as stored ({len(published)} read)"
                )
            expected = _recomputed(events, where.workdir, load.table_id)
            deadline = time.monotonic() + 30
            while (got := _scoring_games(where.scoring, load.table_id)) != expected:
                if time.monotonic() > deadline:
                    row.scoring += 1
                    row.notes.append(f"scoring {load.table_id}: {got} != {expected}")
                    break
                time.sleep(1)


def longest_gap(changes: list[float], since: float, ended: float) -> float:
    """The longest time between two changes (or ``since``, or ``ended``) from ``since`` on."""
    marks = [since, *(t for t in changes if t >= since), ended]
    return max(b - a for a, b in itertools.pairwise(marks))


def pauses(row: Row, run: LoadRun, stuck: float) -> None:
    """The pauses: from a second before the strike, and after the strike returned."""
    row.back = run.back - run.struck
    for load in run.loads:
        longest = longest_gap(load.changes, run.struck - 1.0, run.ended)
        row.pause = max(row.pause, longest)
        row.after = max(row.after, longest_gap(load.changes, run.back, run.ended))
        if longest > stuck:
            row.stuck += 1
            refused = [log.refused for seat in load.seats for log in seat.logs if log.refused]
            last = load.seats[0].logs[-1].last_view if load.seats[0].logs else None
            phase = last.phase if last is not None else "?"
            row.notes.append(
                f"stuck {load.table_id}: {longest:.1f} s without a change "
                f"(host saw {phase}; refused {refused})"
            )


def report(rows: list[Row], name: str, back: str = "back_s") -> int:
    """Print the one table of results; the exit code (1 on any failed row)."""
    print(
        f"fault                    accepted lost dup order js scoring audit stuck "
        f"{back} pause_s after_s"
    )
    for row in rows:
        label = f"{row.fault} *" if row.excused else row.fault
        print(
            f"{label:<24} {row.accepted:>8} {row.lost:>4} {row.duplicated:>3} "
            f"{row.disorder:>5} {row.jetstream:>2} {row.scoring:>7} {row.audit:>5} "
            f"{row.stuck:>5} {row.back:>{len(back)}.1f} {row.pause:>7.1f} {row.after:>7.1f}"
        )
    if any(row.excused for row in rows):
        print("* losses by design, printed and not failing the run (see the fault's notes)")
    if rows:
        worst = max(rows, key=lambda r: r.pause)
        print(f"longest pause: {worst.pause:.1f} s ({worst.fault})")
        latest = max(rows, key=lambda r: r.after)
        print(f"longest pause after the fault was over: {latest.after:.1f} s ({latest.fault})")
    failed = [row.fault for row in rows if not row.ok]
    print(f"{name}: " + ("OK" if not failed else "FAILED: " + ", ".join(failed)))
    return 1 if failed else 0
