"""The table service's parts without processes: command translation, the actor check,
TableHost's settle / expected version / retried outcome, and the table list (SQLite files).
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
import pytest
from sqlalchemy import text

from president.audit import verify_table
from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import card_name, cards_of, mask_of
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import options_for
from president.servicekit.errors import ServiceError
from president.servicekit.nats import Subjects, envelope
from president.servicekit.table_client import TableClient, read_pages
from president.services.gateway.upstream import GrpcTables
from president.services.gateway.watch import apply
from president.services.table import relay as relay_module
from president.services.table.app import TableApp
from president.services.table.commands import React, check_actor, translate
from president.services.table.directory import Summary, TableDirectory
from president.services.table.handlers import TableServicer
from president.services.table.relay import CONSUMER, FastAcked, OutboxRelay
from president.store import EventStore, NewEvent, Position, StoredEvent
from president.table.v1 import table_pb2 as tpb
from president.table.v1 import table_pb2_grpc
from president.tables import (
    DealtCards,
    LocalDealer,
    Outcome,
    RoundKey,
    TableHost,
    VersionMismatch,
    fold_stored,
    stream_id,
    table_id_of,
)
from president.viewproto import table_view

if TYPE_CHECKING:
    from tests.conftest import PostgresServer


def test_translates_each_kind_of_command() -> None:
    play = translate(
        gpb.Command(play_cards=gpb.PlayCards(seat=2, cards=["10h", "10S"], trick_version=3))
    )
    assert play.command == rnd.PlayCards(2, mask_of("10H 10S"), 3)
    assert play.seat == 2 and isinstance(play.command, rnd.PlayCards)
    passing = translate(gpb.Command(**{"pass": gpb.Pass(seat=1)}))
    assert passing.command == rnd.Pass(1, None)
    returned = translate(gpb.Command(return_cards=gpb.ReturnCards(seat=0, cards=["3C"])))
    assert returned.command == rnd.ReturnCards(0, mask_of("3C"))
    react = translate(gpb.Command(react=gpb.React(seat=3, reaction="thumbs_up")))
    assert react.command == React(3, "thumbs_up") and react.seat == 3
    leave = translate(gpb.Command(leave=gpb.Leave(seat=1)))
    assert leave.command == g.Leave(1, False) and leave.seat == 1
    removal = translate(gpb.Command(leave=gpb.Leave(seat=1, removed=True)))
    assert removal.removal and removal.seat is None
    sit = translate(gpb.Command(sit_down=gpb.SitDown(seat=0, player_id="ann", display_name="Ann")))
    assert sit.command == g.SitDown(0, "ann", False, "Ann") and sit.seat is None
    assert translate(gpb.Command(start_game=gpb.StartGame())).command == g.StartGame()
    assert translate(gpb.Command(back_to_lobby=gpb.BackToLobby())).command == g.BackToLobby()


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (gpb.Command(), "MISSING_COMMAND"),
        (gpb.Command(play_cards=gpb.PlayCards(seat=0, cards=["1H"])), "MALFORMED_CARDS"),
        (gpb.Command(play_cards=gpb.PlayCards(seat=0)), "MALFORMED_CARDS"),
        (gpb.Command(play_cards=gpb.PlayCards(seat=0, cards=["3C"] * 60)), "MALFORMED_CARDS"),
        (gpb.Command(return_cards=gpb.ReturnCards(seat=0, cards=["X"])), "MALFORMED_CARDS"),
        (gpb.Command(play_cards=gpb.PlayCards(seat=99, cards=["3C"])), "NO_SUCH_SEAT"),
        (gpb.Command(react=gpb.React(seat=0, reaction="")), "INVALID_REACTION"),
        (gpb.Command(react=gpb.React(seat=0, reaction="a" * 33)), "INVALID_REACTION"),
        (gpb.Command(sit_down=gpb.SitDown(seat=0, player_id="p" * 65)), "INVALID_PLAYER"),
    ],
)
def test_bad_commands_are_invalid_arguments(command: gpb.Command, reason: str) -> None:
    with pytest.raises(ServiceError) as refused:
        translate(command)
    assert refused.value.status == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.reason == reason and refused.value.message


def test_a_card_named_twice_is_not_in_hand() -> None:
    with pytest.raises(Rejected) as refused:
        translate(gpb.Command(play_cards=gpb.PlayCards(seat=0, cards=["QS", "qs"])))
    assert refused.value.code == ErrorCode.NOT_IN_HAND and "QS" in refused.value.reason


def test_the_actor_acts_only_for_its_own_seat() -> None:
    play = translate(gpb.Command(**{"pass": gpb.Pass(seat=1)}))
    check_actor(play, gpb.Actor(player_id="bob", seat=1), "bob", "")
    check_actor(play, gpb.Actor(player_id="server", seat=-1), "bob", "")
    for actor, occupant in (
        (gpb.Actor(player_id="ann", seat=0), "bob"),
        (gpb.Actor(player_id="ann", seat=1), "bob"),  # a stale token for the seat
    ):
        with pytest.raises(ServiceError) as refused:
            check_actor(play, actor, occupant, "")
        assert (refused.value.status, refused.value.reason) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_SEAT",
        )
    removal = translate(gpb.Command(leave=gpb.Leave(seat=1, removed=True)))
    check_actor(removal, gpb.Actor(player_id="host", seat=0), "bob", "host")
    with pytest.raises(ServiceError, match="NOT_HOST"):
        check_actor(removal, gpb.Actor(player_id="ann", seat=0), "bob", "host")
    start = translate(gpb.Command(start_game=gpb.StartGame()))
    check_actor(start, gpb.Actor(player_id="ann", seat=0), None, "")


def test_a_player_who_left_acts_no_more_for_the_seat() -> None:
    play = translate(gpb.Command(**{"pass": gpb.Pass(seat=1)}))
    with pytest.raises(ServiceError) as refused:
        check_actor(play, gpb.Actor(player_id="bob", seat=1), "bob", "", leaving=True)
    assert (refused.value.status, refused.value.reason) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "SEAT_LEFT",
    )
    assert refused.value.message
    check_actor(play, gpb.Actor(player_id="server", seat=-1), "bob", "", leaving=True)


# --------------------------------------------------------------------------- TableHost
@dataclass
class FlakyDealer(LocalDealer):
    """A local dealer whose deal fails while ``down`` is set, like a dealer being restarted."""

    down: bool = False
    deals: list[RoundKey] = field(default_factory=list)

    def deal(self, key: RoundKey) -> DealtCards:
        if self.down:
            raise ServiceError(grpc.StatusCode.UNAVAILABLE, "DEALER_UNAVAILABLE", "down")
        self.deals.append(key)
        return super().deal(key)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as opened:
        yield opened


def bot_table(host: TableHost, table_id: str = "t1") -> None:
    host.create(table_id, options_for("classic", {"game_end": "rounds:2"}), seat_count=4)
    host.execute(table_id, g.SitDown(0, "p0"), f"{table_id}-sit-0", "server")
    for seat in (1, 2, 3):
        host.execute(table_id, g.SitDown(seat, f"b{seat}", True), f"{table_id}-sit-{seat}", "s")


def human_move(host: TableHost, table_id: str) -> rnd.Command | g.GameCommand | None:
    view = table_view(host.load(table_id), 0)
    if view.phase == "game_over":
        return None
    if view.phase == "between_rounds":
        return g.NextRound()
    action = view.round.legal[0]
    if action.verb == "play":
        return rnd.PlayCards(0, mask_of(list(action.cards)), view.round.trick_version)
    if action.verb == "pass":
        return rnd.Pass(0, view.round.trick_version)
    return rnd.ReturnCards(0, mask_of(list(action.cards)))


def test_settle_finishes_a_deal_the_dealer_failed(store: EventStore) -> None:
    dealer = FlakyDealer(down=True)
    host = TableHost(store, dealer)
    bot_table(host)
    with pytest.raises(ServiceError):
        host.execute("t1", g.StartGame(), "start", "server")
    assert host.load("t1").game.phase == g.GamePhase.DEALING  # committed, not dealt
    dealer.down = False
    # A new host (another process) finds the table waiting and deals it.
    restarted = TableHost(store, dealer)
    version = restarted.settle("t1")
    table = restarted.load("t1")
    assert table.game.phase == g.GamePhase.ROUND and table.version == version
    assert restarted.settle("t1") == version  # settled: nothing more to do
    assert restarted.execute("t1", g.StartGame(), "start", "server").events == 1  # the first result


def test_a_replayed_table_does_not_reveal_again(store: EventStore) -> None:
    dealer = LocalDealer()
    host = TableHost(store, dealer)
    bot_table(host)
    host.execute("t1", g.StartGame(), "start", "server")
    moves = 0
    while (command := human_move(host, "t1")) is not None:
        host.execute("t1", command, f"m{moves}", "p0")
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
    first = host.execute("t1", g.StartGame(), "start", "server")
    assert first.version == host.load("t1").version  # the deal and the bots' moves included
    retried = host.execute("t1", g.StartGame(), "start", "server")
    assert retried == first and not retried.committed
    stored = store.read_stream("table-t1")
    assert [e.version for e in first.committed] == [
        e.version for e in stored if e.command_id.startswith("start")
    ]
    assert first.committed[-1].version == first.version
    command = human_move(host, "t1")
    assert command is not None
    with pytest.raises(VersionMismatch) as stale:
        host.execute("t1", command, "late", "p0", expected_version=first.version - 1)
    assert stale.value.actual == first.version
    moved = host.execute("t1", command, "on-time", "p0", expected_version=first.version)
    assert moved.version > first.version


START = translate(gpb.Command(start_game=gpb.StartGame()))
AS_SERVER = gpb.Actor(player_id="server", seat=-1)


def fixed_secret(key: RoundKey) -> bytes:
    """The same secret for the same round, whatever store it is dealt in."""
    return hashlib.sha256(f"{key.table_id}/{key.game_no}/{key.round_no}".encode()).digest()


@dataclass
class WatchedDealer(LocalDealer):
    """A local dealer that notes the thread of every call, and fails one made while
    ``forbidden`` is set."""

    forbidden: bool = False
    threads: list[int] = field(default_factory=list)

    def _called(self) -> None:
        if self.forbidden:
            raise AssertionError("the dealer was called by a command told not to call it")
        self.threads.append(threading.get_ident())

    def commit(self, key: RoundKey, players: int, jokers: bool, hand_size: int | None) -> str:
        self._called()
        return super().commit(key, players, jokers, hand_size)

    def deal(self, key: RoundKey) -> DealtCards:
        self._called()
        return super().deal(key)

    def reveal(self, key: RoundKey) -> bytes:
        self._called()
        return super().reveal(key)


def play_a_game(
    host: TableHost, dealer: WatchedDealer, *, stop_before_dealer: bool
) -> tuple[dict[str, Outcome], list[int]]:
    """Start the bot table and play seat 0 to the end of the game: each command's
    outcome by command id, and the steps where commands stopped before the dealer.

    ``stop_before_dealer``: each command runs with ``call_dealer=False`` (the
    dealer refuses to be called then), and ``finish`` does what is left.
    """
    outcomes: dict[str, Outcome] = {}
    stops: list[int] = []
    command: rnd.Command | g.GameCommand | None = g.StartGame()
    while command is not None:
        command_id = f"m{len(outcomes)}"
        if stop_before_dealer:
            dealer.forbidden = True
            outcome = host.execute("t1", command, command_id, "p0", call_dealer=False)
            dealer.forbidden = False
            if outcome.stopped_at is not None:
                stops.append(outcome.stopped_at)
                outcome = host.finish("t1", command_id, outcome)
        else:
            outcome = host.execute("t1", command, command_id, "p0")
        outcomes[command_id] = outcome
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
            outcomes, stops = play_a_game(host, dealer, stop_before_dealer=stopping)
            stored = store.read_stream(stream_id("t1"))
            runs[stopping] = (outcomes, stops, stored)
            assert verify_table(stored).ok
            for command_id, outcome in outcomes.items():  # a retry: the whole command's version
                assert host.execute("t1", g.EndGame(), command_id, "p0") == outcome
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


async def test_an_idle_table_service_runs_plays_on_its_event_loop(store: EventStore) -> None:
    """Plays and passes on the loop; the dealer, and every other command, in worker threads;
    a play that ends a round answers with the reveal a worker thread made; a play sent
    while another call runs in a worker thread goes to a worker thread too."""
    loop_thread = threading.get_ident()
    dealer = WatchedDealer(secret_for=fixed_secret)
    appended: list[tuple[int, str]] = []
    host = TableHost(
        store,
        dealer,
        on_appended=lambda result: appended.append(
            (threading.get_ident(), result.events[0].command_id)
        ),
    )
    app = TableApp(store, host, TableDirectory(store))
    bot_table(host)
    host.create("t2", options_for("club"), seat_count=3)
    appended.clear()
    server = grpc.aio.server()
    servicer = TableServicer(app)
    table_pb2_grpc.add_TableServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = table_pb2_grpc.TableServiceStub(channel)
    p0 = gpb.Actor(player_id="p0", seat=0)
    answers: dict[str, tpb.ExecuteCommandResponse] = {}
    beside_a_worker = ""
    try:
        command: rnd.Command | g.GameCommand | None = g.StartGame()
        n = 0
        while command is not None:
            if isinstance(command, rnd.PlayCards):
                cards = [card_name(card) for card in cards_of(command.cards)]
                message = gpb.Command(play_cards=gpb.PlayCards(seat=0, cards=cards))
            elif isinstance(command, rnd.Pass):
                message = gpb.Command(**{"pass": gpb.Pass(seat=0)})
            elif isinstance(command, rnd.ReturnCards):
                cards = [card_name(card) for card in cards_of(command.cards)]
                message = gpb.Command(return_cards=gpb.ReturnCards(seat=0, cards=cards))
            elif isinstance(command, g.NextRound):
                message = gpb.Command(next_round=gpb.NextRound())
            else:
                message = gpb.Command(start_game=gpb.StartGame())
            kind = message.WhichOneof("kind")
            command_id = f"{kind}-{n}"
            request = tpb.ExecuteCommandRequest(
                table_id="t1", command_id=command_id, actor=p0, command=message
            )
            if not beside_a_worker and kind in ("play_cards", "pass"):
                # A view of t2 waits in a worker thread for the lock this test holds.
                beside_a_worker = command_id
                with host.lock("t2"):
                    viewing = asyncio.ensure_future(
                        stub.GetTable(tpb.GetTableRequest(table_id="t2"))
                    )
                    deadline = time.monotonic() + 10
                    while servicer.calls_in_workers == 0 and time.monotonic() < deadline:
                        await asyncio.sleep(0.01)
                    assert servicer.calls_in_workers == 1
                    answering = asyncio.ensure_future(stub.ExecuteCommand(request))
                    await asyncio.sleep(0.2)
                await viewing
                answers[command_id] = await answering
            else:
                answers[command_id] = await stub.ExecuteCommand(request)
            command = human_move(host, "t1")
            n += 1
    finally:
        await channel.close()
        await server.stop(None)
    on_loop = {command_id for thread, command_id in appended if thread == loop_thread}
    seat_moves = {c for c in answers if c.startswith(("play_cards-", "pass-"))}
    assert beside_a_worker in seat_moves
    assert any(c == beside_a_worker for _, c in appended)
    # Every play and pass, and the bots' moves after them; nothing of the dealer's.
    assert {c.split("/")[0] for c in on_loop} == seat_moves - {beside_a_worker}
    assert all(c.split("/")[-1].startswith(("bot-", "pass-", "play_cards-")) for c in on_loop)
    assert any("/bot-" in c for c in on_loop)
    assert dealer.threads and loop_thread not in dealer.threads
    revealing = [
        response
        for command_id, response in answers.items()
        if command_id in seat_moves
        and any(e.type.endswith("DealRevealed") for e in response.committed)
    ]
    assert revealing, "no play ended a round"
    for response in revealing:
        assert response.version == response.committed[-1].version
        assert [e.version for e in response.committed] == list(
            range(response.committed[0].version, response.version + 1)
        )
    stored = store.read_stream(stream_id("t1"))
    assert stored[-1].version == answers[max(answers, key=lambda c: int(c.rsplit("-")[-1]))].version
    assert verify_table(stored).ok


def test_commands_run_on_the_loop_only_while_the_store_has_no_commit_under_way(
    store: EventStore,
) -> None:
    host = TableHost(store, LocalDealer())
    app = TableApp(store, host, TableDirectory(store))
    bot_table(host)
    assert not app.runs_on_loop("t1")  # not settled by this app yet: it may need the dealer
    app.execute("t1", START, "start", AS_SERVER, None)
    assert app.runs_on_loop("t1")
    assert not app.runs_on_loop("elsewhere")  # not in memory
    outcome: list[object] = []
    with store.engine.connect() as other_writer:
        other_writer.begin()  # BEGIN IMMEDIATE: holds SQLite's write lock
        other_writer.execute(text("DELETE FROM tracking"))
        appending = threading.Thread(
            target=lambda: outcome.append(host.react("t1", 0, "wave", "r1", "p0"))
        )
        appending.start()
        deadline = time.monotonic() + 10
        while app.runs_on_loop("t1") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not app.runs_on_loop("t1")  # an append is committing: a command would wait
        other_writer.commit()
    appending.join(timeout=10)
    assert len(outcome) == 1 and app.runs_on_loop("t1")


def test_on_postgresql_commands_never_run_on_the_loop(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.create_database("on_loop")
    with EventStore.from_url(url, migrate=True) as store:
        host = TableHost(store, LocalDealer())
        app = TableApp(store, host, TableDirectory(store))
        bot_table(host)
        app.execute("t1", START, "start", AS_SERVER, None)
        assert host.cached("t1") is not None
        assert not app.runs_on_loop("t1")  # a commit there waits on the network


def test_a_stream_that_does_not_begin_with_table_created_is_refused(store: EventStore) -> None:
    """The table host and the gateway's feed fold a stream only from its TableCreated."""
    host = TableHost(store, LocalDealer())
    host.create("t1", options_for("club"), seat_count=3)
    host.execute("t1", g.SitDown(0, "ann"), "sit", "ann")
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
    host.execute("t1", g.StartGame(), "start", "server")
    host.create("t2", options_for("club"), seat_count=3)
    version = host.load("t1").version
    now = time.monotonic()
    assert host.forget_idle(600, now=now) == []
    with host.lock("t2"):  # a table in use stays, however long it was idle
        assert host.forget_idle(600, now=now + 601) == ["t1"]
    assert host.cached("t1") is None and host.table_ids() == ["t2"]
    command = human_move(host, "t1")  # loads it again from the store
    assert command is not None
    moved = host.execute("t1", command, "after-idle", "p0")
    assert moved.version > version
    assert store.read_stream("table-t1")[-1].version == moved.version


def test_react_needs_an_occupied_seat(store: EventStore) -> None:
    host = TableHost(store, LocalDealer())
    host.create("t2", options_for("club"), seat_count=3)
    host.execute("t2", g.SitDown(0, "ann"), "sit", "ann")
    assert host.react("t2", 0, "wave", "r1", "ann").version == 3
    assert host.react("t2", 0, "wave", "r1", "ann").version == 3  # once per command id
    with pytest.raises(Exception, match="NO_SUCH_SEAT"):
        host.react("t2", 1, "wave", "r2", "ann")


def test_the_table_list_follows_the_store(store: EventStore) -> None:
    host = TableHost(store, LocalDealer())
    directory = TableDirectory(store)
    host.create("open", options_for("house"), seat_count=3, visibility="public")
    host.create("mine", options_for("house"), seat_count=3, visibility="private")
    assert directory.refresh() == 2
    assert [s.table_id for s in directory.summaries(open_only=True)] == ["open"]
    for seat in range(3):
        host.execute("open", g.SitDown(seat, f"p{seat}"), f"s{seat}", "server")
    host.execute("open", g.StartGame(), "go", "server")
    directory.refresh()
    summaries = {s.table_id: s for s in directory.summaries()}
    assert summaries["open"].phase == g.GamePhase.ROUND and summaries["open"].seated == 3
    assert summaries["mine"].preset == "house" and summaries["mine"].phase == g.GamePhase.LOBBY
    assert directory.summaries(open_only=True) == []
    assert directory.refresh() == 0


@pytest.fixture(params=["sqlite", "postgres"])
def either_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    """An event store on each backend."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        url = server.create_database("directory")
    with EventStore.from_url(url, migrate=True) as opened:
        yield opened


class ReadCounting(EventStore):
    """The event store, counting the events read back."""

    events_read = 0

    def read_all(self, after: Position | None, limit: int = 1000) -> list[StoredEvent]:
        stored = super().read_all(after, limit)
        self.events_read += len(stored)
        return stored

    def read_stream(
        self, stream_id: str, from_version: int = 1, limit: int | None = None
    ) -> list[StoredEvent]:
        stored = super().read_stream(stream_id, from_version, limit)
        self.events_read += len(stored)
        return stored


def _seat_all(host: TableHost, table_id: str, seats: int) -> None:
    for seat in range(seats):
        host.execute(table_id, g.SitDown(seat, f"{table_id}-p{seat}"), f"{table_id}-s{seat}", "x")


def test_a_new_replica_lists_the_tables_without_reading_the_log_again(
    either_store: EventStore,
) -> None:
    host = TableHost(either_store, LocalDealer())
    for n in range(5):
        host.create(f"t{n}", options_for("house"), seat_count=3, visibility="public")
    _seat_all(host, "t0", 3)
    host.execute("t0", g.StartGame(), "go", "server")
    first = TableDirectory(either_store)
    first.refresh()
    listed = first.summaries()
    assert [s.table_id for s in listed] == [f"t{n}" for n in range(5)]
    assert [s.table_id for s in first.summaries(open_only=True)] == ["t1", "t2", "t3", "t4"]
    # A replica that starts now (or this one after a restart) reads the rows.
    counting = ReadCounting(either_store.engine)
    again = TableDirectory(counting)
    assert again.summaries() == listed
    assert again.refresh() == 0 and counting.events_read == 0
    host.execute("t1", g.SitDown(0, "late"), "late", "late")
    assert again.refresh() == 1 and counting.events_read <= 3  # the event, and t1's stream
    assert next(s for s in again.summaries() if s.table_id == "t1").seated == 1


@pytest.mark.parametrize("cached_tables", [2_000, 1], ids=["cached", "evicted"])
def test_replicas_taking_turns_keep_every_row_right(
    either_store: EventStore, cached_tables: int
) -> None:
    """Each replica folds what the other did not, from its cache or the table's stream."""
    host = TableHost(either_store, LocalDealer())
    replicas = [TableDirectory(either_store, cached_tables=cached_tables) for _ in range(2)]
    for n in range(3):
        host.create(f"t{n}", options_for("house"), seat_count=3, visibility="public")
    for step, (table_id, seat) in enumerate(
        [("t0", 0), ("t1", 0), ("t0", 1), ("t2", 0), ("t0", 2), ("t1", 1), ("t1", 2)]
    ):
        host.execute(table_id, g.SitDown(seat, f"{table_id}-{seat}"), f"c{step}", "x")
        replicas[step % 2].refresh()
    host.execute("t0", g.StartGame(), "go", "server")
    replicas[1].refresh()
    expected = [Summary.of(host.load(f"t{n}")) for n in range(3)]
    for replica in replicas:
        assert replica.summaries() == expected
        assert [s.table_id for s in replica.summaries(open_only=True)] == ["t2"]


def test_a_replica_lists_its_own_change_before_the_rows_show_it(store: EventStore) -> None:
    host = TableHost(store, LocalDealer())
    directory = TableDirectory(store)
    host.create("t1", options_for("house"), seat_count=3, visibility="public")
    directory.refresh()
    assert [s.table_id for s in directory.summaries(open_only=True)] == ["t1"]
    _seat_all(host, "t1", 3)
    directory.note(host.load("t1"))  # no refresh: the rows still say it is open
    assert directory.summaries(open_only=True) == []
    assert directory.summaries()[0].seated == 3


def test_the_table_service_refuses_a_player_who_left(store: EventStore) -> None:
    """After Leave mid-round a bot plays the seat; its player's commands are SEAT_LEFT."""
    host = TableHost(store, LocalDealer())
    app = TableApp(store, host, TableDirectory(store))
    host.create("t3", options_for("classic"), seat_count=4)
    for seat, player, bot in (
        (0, "ann", False),
        (1, "bob", False),
        (2, "b2", True),
        (3, "b3", True),
    ):
        host.execute("t3", g.SitDown(seat, player, bot), f"sit-{seat}", "server")
    host.execute("t3", g.StartGame(), "start", "server")
    ann = gpb.Actor(player_id="ann", seat=0)
    app.execute("t3", translate(gpb.Command(leave=gpb.Leave(seat=0))), "leave", ann, None)
    assert host.load("t3").game.seats[0].leaving  # bob, a human, holds the round up
    before = host.load("t3").version
    for command in (
        gpb.Command(**{"pass": gpb.Pass(seat=0)}),
        gpb.Command(react=gpb.React(seat=0, reaction="wave")),
        gpb.Command(return_cards=gpb.ReturnCards(seat=0, cards=["3C"])),
        gpb.Command(leave=gpb.Leave(seat=0)),
    ):
        with pytest.raises(ServiceError) as refused:
            app.execute("t3", translate(command), f"after-{command.WhichOneof('kind')}", ann, None)
        assert refused.value.reason == "SEAT_LEFT"
    assert host.load("t3").version == before


# --------------------------------------------------------------------------- outbox relay
def _stored(stream: str, version: int, row: int) -> StoredEvent:
    return StoredEvent(stream, version, "t", b"", {}, Position(0, row), "h", "p")


def test_fast_acked_entries_go_once_the_position_passes_them() -> None:
    acked = FastAcked(limit=3)
    first, second, third = (_stored("table-a", v, v) for v in (1, 2, 3))
    for stored in (first, second, third):
        acked.add(stored)
    assert acked.full
    assert acked.take(second) and not acked.take(second)  # counted as sent once
    acked.passed(Position(0, 2))  # another relay, or the loop, passed the first two
    assert len(acked) == 1 and not acked.take(first) and not acked.full
    acked.add(_stored("table-b", 1, 2))  # acknowledged after the position passed it
    assert len(acked) == 1
    acked.passed(Position(0, 1))  # a stale position changes nothing
    assert acked.take(third) and len(acked) == 0


async def test_the_relay_forgets_fast_acked_events_it_did_not_read(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[tuple[str, int]] = []

    async def publish(
        _js: object, _subjects: object, stored: StoredEvent, _timeout: float | None = None
    ) -> None:
        sent.append((stored.stream_id, stored.version))

    monkeypatch.setattr(relay_module.jetstream, "publish", publish)
    relay = OutboxRelay(store, Subjects(), "nats://unused")
    relay._js, relay._loop = object(), asyncio.get_running_loop()  # type: ignore[assignment]

    def append(version: int) -> StoredEvent:
        new = NewEvent("t", b"x")
        return store.append("table-r", version - 1, [new], f"c{version}").events[0]

    # The loop published an event before the fast path recorded it.
    first = append(1)
    await relay.drain()
    relay._fast_acked.add(first)
    assert len(relay._fast_acked) == 0
    # Another relay moved the position over a fast-acked event this relay never read.
    second = append(2)
    relay._fast_acked.add(second)
    store.process_batch(CONSUMER, lambda _events, _connection: None, limit=10)
    await relay.drain()
    assert len(relay._fast_acked) == 0
    # Its own batch counts a fast-acked event as sent.
    third = append(3)
    relay._fast_acked.add(third)
    await relay.drain()
    assert sent == [("table-r", 1)] and len(relay._fast_acked) == 0


# --------------------------------------------------------------------------- paged reads
async def test_readers_page_through_a_table_longer_than_one_response(store: EventStore) -> None:
    """The service returns at most ``max_read`` events; the gateway and table client page."""
    host = TableHost(store, LocalDealer())
    app = TableApp(store, host, TableDirectory(store), max_read=7)
    host.create("long", options_for("club"), seat_count=3)
    host.execute("long", g.SitDown(0, "ann"), "sit", "ann")
    for n in range(30):
        host.react("long", 0, "wave", f"r{n}", "ann")
    total = store.current_version(stream_id("long"))
    assert total == 32
    assert len(app.read_events("long", 0, 0)) == 7  # limit 0: one capped page
    assert len(app.read_events("long", 0, 100)) == 7
    assert [e.version for e in app.read_events("long", 5, 3)] == [6, 7, 8]
    server = grpc.aio.server()
    table_pb2_grpc.add_TableServiceServicer_to_server(TableServicer(app), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    address = f"127.0.0.1:{port}"
    gateway, client = GrpcTables(address, page=7), TableClient(address, page=7)
    try:
        for read in (gateway.read_events, client.read_events):
            assert [e.version for e in await read("long", 0)] == list(range(1, total + 1))
            assert [e.version for e in await read("long", 3, 16)] == list(range(4, 20))
            assert [e.version for e in await read("long", 25, 100)] == list(range(26, 33))
            assert await read("long", total) == []
        # A page smaller than the service's cap pages too.
        small = TableClient(address, page=4)
        assert len(await small.read_events("long", 0)) == total
        await small.close()
    finally:
        await gateway.close()
        await client.close()
        await server.stop(None)


async def test_read_pages_stops_at_the_limit_and_at_a_short_page() -> None:
    calls: list[tuple[int, int]] = []
    versions = list(range(1, 11))

    async def fetch(after: int, count: int) -> list[epb.EventEnvelope]:
        calls.append((after, count))
        return [epb.EventEnvelope(version=v) for v in versions if v > after][:count]

    assert [e.version for e in await read_pages(fetch, 0, 0, page=4)] == versions
    assert calls == [(0, 4), (4, 4), (8, 4)]
    calls.clear()
    assert [e.version for e in await read_pages(fetch, 2, 5, page=4)] == [3, 4, 5, 6, 7]
    assert calls == [(2, 4), (6, 1)]


def test_table_id_of_is_the_inverse_of_stream_id() -> None:
    assert stream_id("t-1_x") == "table-t-1_x"
    assert table_id_of(stream_id("t-1_x")) == "t-1_x"
    assert table_id_of("other") == "other"
