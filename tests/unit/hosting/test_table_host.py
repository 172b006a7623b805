"""TableHost, the table application service, on SQLite files: settling what a failed
dealer left, replays, the expected version and a retry's outcome, a command stopped before
the dealer, idle tables, reactions, and stream naming."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from president.audit import verify_table
from president.hosting.dealer import LocalDealer
from president.hosting.errors import VersionMismatch
from president.hosting.host import Outcome, TableHost
from president.hosting.projection import fold_stored
from president.hosting.streams import stream_id, table_id_of
from president.rules import game as g
from president.rules import round as rnd
from president.rules.options import options_for
from president.servicekit.nats import envelope
from president.services.gateway.streams.entries import apply
from president.store import EventStore
from tests.support.table_host import (
    FlakyDealer,
    WatchedDealer,
    bot_table,
    fixed_secret,
    human_move,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    """An event store on a SQLite file of its own."""
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as opened:
        yield opened


def test_settle_finishes_a_deal_the_dealer_failed(store: EventStore) -> None:
    dealer = FlakyDealer(down=True)
    host = TableHost(store, dealer)
    bot_table(host)
    started = host.decide_and_append("t1", g.StartGame(), "start", "server")
    assert started.unfinished  # committed (so answered success), the deal left for later
    assert host.load("t1").game.phase == g.GamePhase.DEALING  # committed, not dealt
    dealer.down = False
    # A new host (another process) finds the table waiting and deals it.
    restarted = TableHost(store, dealer)
    version = restarted.settle("t1")
    table = restarted.load("t1")
    assert table.game.phase == g.GamePhase.ROUND and table.version == version
    assert restarted.settle("t1") == version  # settled: nothing more to do
    assert (
        restarted.decide_and_append("t1", g.StartGame(), "start", "server").events == 1
    )  # the first result


def test_a_replayed_table_does_not_reveal_again(store: EventStore) -> None:
    dealer = LocalDealer()
    host = TableHost(store, dealer)
    bot_table(host)
    host.decide_and_append("t1", g.StartGame(), "start", "server")
    moves = 0
    while (command := human_move(host, "t1")) is not None:
        host.decide_and_append("t1", command, f"m{moves}", "p0")
        moves += 1
        replayed = TableHost(store, dealer)
        version = replayed.load("t1").version
        assert replayed.settle("t1") == version, "a replayed table did something on its own"
    events = store.read_stream(stream_id("t1"))
    assert verify_table(events).ok
    revealed = [e for e in events if e.type.endswith("DealRevealed")]
    assert len(revealed) == 2


def test_expected_version_and_the_retried_outcome(store: EventStore) -> None:
    host = TableHost(store, LocalDealer())
    bot_table(host)
    first = host.decide_and_append("t1", g.StartGame(), "start", "server")
    assert first.version == host.load("t1").version  # the deal and the bots' moves included
    retried = host.decide_and_append("t1", g.StartGame(), "start", "server")
    assert retried == first and not retried.committed
    stored = store.read_stream("table-t1")
    assert [e.version for e in first.committed] == [
        e.version for e in stored if e.command_id.startswith("start")
    ]
    assert first.committed[-1].version == first.version
    command = human_move(host, "t1")
    assert command is not None
    with pytest.raises(VersionMismatch) as stale:
        host.decide_and_append("t1", command, "late", "p0", expected_version=first.version - 1)
    assert stale.value.actual == first.version
    moved = host.decide_and_append("t1", command, "on-time", "p0", expected_version=first.version)
    assert moved.version > first.version


def play_a_game(
    host: TableHost,
    dealer: WatchedDealer,
    *,
    stop_before_dealer: bool,
    sent: dict[str, rnd.Command | g.GameCommand] | None = None,
) -> tuple[dict[str, Outcome], list[int]]:
    """Start the bot table and play seat 0 to the end of the game: each command's
    outcome by command id, and the steps where commands stopped before the dealer
    (``sent`` gets each command by its id).

    ``stop_before_dealer``: each command runs until the dealer (the dealer refuses
    to be called then), and ``run_dealer_step`` does what is left.
    """
    outcomes: dict[str, Outcome] = {}
    stops: list[int] = []
    command: rnd.Command | g.GameCommand | None = g.StartGame()
    while command is not None:
        command_id = f"m{len(outcomes)}"
        if stop_before_dealer:
            dealer.forbidden = True
            outcome = host.decide_and_append_until_dealer("t1", command, command_id, "p0")
            dealer.forbidden = False
            if outcome.pending is not None:
                assert outcome.pending.command_id == command_id
                stops.append(outcome.pending.step)
                outcome = host.run_dealer_step(outcome)
        else:
            outcome = host.decide_and_append("t1", command, command_id, "p0")
        outcomes[command_id] = outcome
        if sent is not None:
            sent[command_id] = command
        command = human_move(host, "t1")
    return outcomes, stops


def test_a_command_stopped_before_the_dealer_finishes_as_if_run_in_one_go(
    tmp_path: Path,
) -> None:
    """The table service runs a play on its event loop without calling the dealer, and a
    worker thread finishes it: the stored log must be the one a single run writes."""
    runs = {}
    for stopping in (False, True):
        with EventStore.from_url(f"sqlite:///{tmp_path / f'{stopping}.db'}", migrate=True) as store:
            dealer = WatchedDealer(secret_for=fixed_secret)
            host = TableHost(store, dealer)
            bot_table(host)
            sent: dict[str, rnd.Command | g.GameCommand] = {}
            outcomes, stops = play_a_game(host, dealer, stop_before_dealer=stopping, sent=sent)
            stored = store.read_stream(stream_id("t1"))
            runs[stopping] = (outcomes, stops, stored)
            assert verify_table(stored).ok
            for command_id, outcome in outcomes.items():  # a retry: the whole command's version
                assert host.decide_and_append("t1", sent[command_id], command_id, "p0") == outcome
    (whole, no_stops, stored_whole), (parts, stops, stored_parts) = runs[False], runs[True]
    assert no_stops == []
    assert 0 in stops, "no command needed the dealer right after its own events"
    assert any(step > 0 for step in stops), "no command needed the dealer after bots moved"
    assert [(e.version, e.type, e.payload, e.command_id) for e in stored_parts] == [
        (e.version, e.type, e.payload, e.command_id) for e in stored_whole
    ]
    assert parts == whole
    for command_id, one_go in whole.items():
        assert [e.version for e in parts[command_id].committed] == [
            e.version for e in one_go.committed
        ]


def test_a_stream_that_does_not_begin_with_table_created_is_refused(store: EventStore) -> None:
    """The table host and the gateway's feed fold a stream only from its TableCreated."""
    host = TableHost(store, LocalDealer())
    host.create("t1", options_for("club"), seat_count=4)
    host.decide_and_append("t1", g.SitDown(0, "ann"), "sit", "ann")
    stored = store.read_stream(stream_id("t1"))
    table = fold_stored(None, stored)
    assert table is not None and table.version == 2 and table.game.seats[0].player == "ann"
    with pytest.raises(ValueError, match="table-t1 does not begin with TableCreated"):
        fold_stored(None, stored[1:])
    with pytest.raises(ValueError, match="table-t1 does not begin with TableCreated"):
        apply(None, envelope(stored[1]))
    assert apply(apply(None, envelope(stored[0])).table, envelope(stored[1])).table == table


def test_idle_tables_leave_memory_and_come_back_from_the_store(store: EventStore) -> None:
    host = TableHost(store, LocalDealer())
    bot_table(host)
    host.decide_and_append("t1", g.StartGame(), "start", "server")
    host.create("t2", options_for("club"), seat_count=4)
    version = host.load("t1").version
    now = time.monotonic()
    assert host.forget_idle(600, now=now) == []
    with host.lock("t2"):  # a table in use stays, however long it was idle
        assert host.forget_idle(600, now=now + 601) == ["t1"]
    assert host.cached("t1") is None and host.table_ids() == ["t2"]
    command = human_move(host, "t1")  # loads it again from the store
    assert command is not None
    moved = host.decide_and_append("t1", command, "after-idle", "p0")
    assert moved.version > version
    assert store.read_stream("table-t1")[-1].version == moved.version


def test_react_needs_an_occupied_seat(store: EventStore) -> None:
    host = TableHost(store, LocalDealer())
    host.create("t2", options_for("club"), seat_count=4)
    host.decide_and_append("t2", g.SitDown(0, "ann"), "sit", "ann")
    assert host.append_reaction("t2", 0, "wave", "r1", "ann").version == 3
    assert host.append_reaction("t2", 0, "wave", "r1", "ann").version == 3  # once per command id
    with pytest.raises(Exception, match="NO_SUCH_SEAT"):
        host.append_reaction("t2", 1, "wave", "r2", "ann")


def test_table_id_of_is_the_inverse_of_stream_id() -> None:
    assert stream_id("t-1_x") == "table-t-1_x"
    assert table_id_of(stream_id("t-1_x")) == "t-1_x"
    assert table_id_of("other") == "other"


def test_a_replica_whose_clock_runs_behind_never_stamps_a_table_back_in_time(
    store: EventStore,
) -> None:
    """A table served by a replica whose clock is right, then by one 30 s behind (make
    cluster-chaos's skewed clocks: the audit found version 2 stamped 30 s before version 1):
    the second goes on from the last stamp until its own clock passes it."""
    right = TableHost(store, LocalDealer())
    right.create("clocks", options_for("house"), seat_count=4, host_player_id="p0")
    first = store.read_stream(stream_id("clocks"))[-1]
    behind = TableHost(
        store,
        LocalDealer(),
        clock=lambda: datetime.fromisoformat(str(first.metadata["time"])) - timedelta(seconds=30),
    )
    behind.decide_and_append("clocks", g.SitDown(0, "p0", False, "Ada"), "sit-0", "p0")
    behind.decide_and_append("clocks", g.SitDown(1, "p1", False, "Bo"), "sit-1", "p1")
    events = store.read_stream(stream_id("clocks"))
    times = [datetime.fromisoformat(str(e.metadata["time"])) for e in events]
    assert times == sorted(times) and times[-1] == times[0]
    assert verify_table(events).ok


def test_a_table_owed_a_deal_goes_on_after_the_store_lost_the_command_that_owed_it(
    store: EventStore, tmp_path: Path
) -> None:
    """A command committed and its deal left (the database went away mid-way), then the
    store failed over to a standby without that command: the host's copy still owes the
    deal, and dealing it conflicted with the store for ever (make cluster-chaos's
    asynchronous failover: 3 of 4 tables answered CONFLICT until the end). The host reads
    the table again and goes on from what the store kept."""
    dealer = FlakyDealer(down=False)
    host = TableHost(store, dealer)
    bot_table(host)
    standby = tmp_path / "standby.db"
    with sqlite3.connect(tmp_path / "store.db") as primary, sqlite3.connect(standby) as copy:
        primary.backup(copy)  # the standby has the table up to here
    dealer.down = True
    assert host.decide_and_append("t1", g.StartGame(), "start", "server").unfinished
    owing = host.cached("t1")
    assert owing is not None and owing.game.phase == g.GamePhase.DEALING
    with sqlite3.connect(standby) as copy, sqlite3.connect(tmp_path / "store.db") as primary:
        copy.backup(primary)  # failed over: the StartGame is gone from the store
    dealer.down = False
    started = host.decide_and_append("t1", g.StartGame(), "start-again", "server")
    assert started.events >= 1
    table = host.load("t1")
    assert table.game.phase == g.GamePhase.ROUND
    assert verify_table(store.read_stream(stream_id("t1"))).ok
