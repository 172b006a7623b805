"""The table service's parts without processes: command translation, the actor check,
where a command runs (the executor), the table list, the relay's bookkeeping, paging
(SQLite files). TableHost itself: test_table_host.py.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
import pytest
from sqlalchemy import text

from president.audit import verify_table
from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.hosting.dealer import LocalDealer
from president.hosting.errors import CommandConflict
from president.hosting.host import TableHost
from president.hosting.seat_views import seat_of, table_view
from president.hosting.streams import stream_id
from president.play.recorded import GameClock
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import card_name, cards_of, mask_of
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import options_for
from president.servicekit.errors import Code, ServiceError
from president.servicekit.table_client import TableClient, read_pages
from president.services.table.app import TableApp
from president.services.table.commands import React, translate
from president.services.table.directory import Summary, TableDirectory
from president.services.table.executor import CommandExecutor
from president.services.table.handlers import TableServicer
from president.store import EventStore, Position, StoredEvent
from president.table.v1 import table_pb2 as tpb
from president.table.v1 import table_pb2_grpc
from tests.support.postgres import settle
from tests.support.table_host import WatchedDealer, bot_table, fixed_secret, human_move

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    """An event store on a SQLite file of its own."""
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as opened:
        yield opened


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
    assert refused.value.status == Code.INVALID_ARGUMENT
    assert refused.value.reason == reason and refused.value.message


def test_a_card_named_twice_is_not_in_hand() -> None:
    with pytest.raises(Rejected) as refused:
        translate(gpb.Command(play_cards=gpb.PlayCards(seat=0, cards=["QS", "qs"])))
    assert refused.value.code == ErrorCode.NOT_IN_HAND and "QS" in refused.value.reason


START = translate(gpb.Command(start_game=gpb.StartGame()))
AS_SERVER = gpb.Actor(player_id="server", seat=-1)


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
    host.create("t2", options_for("club"), seat_count=4)
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
                    while servicer.executor.calls_in_workers == 0 and time.monotonic() < deadline:
                        await asyncio.sleep(0.01)
                    assert servicer.executor.calls_in_workers == 1
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
    executor = CommandExecutor(app)
    bot_table(host)
    assert not executor.table_ready_on_loop("t1")  # not settled by this app yet: needs the dealer?
    app.handle_command("t1", START, "start", AS_SERVER, None)
    assert executor.table_ready_on_loop("t1")
    assert not executor.table_ready_on_loop("elsewhere")  # not in memory
    outcome: list[object] = []
    with store.engine.connect() as other_writer:
        other_writer.begin()  # BEGIN IMMEDIATE: holds SQLite's write lock
        other_writer.execute(text("DELETE FROM tracking"))
        appending = threading.Thread(
            target=lambda: outcome.append(host.append_reaction("t1", 0, "wave", "r1", "p0"))
        )
        appending.start()
        deadline = time.monotonic() + 10
        while executor.table_ready_on_loop("t1") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not executor.table_ready_on_loop("t1")  # an append is committing: a command waits
        other_writer.commit()
    appending.join(timeout=10)
    assert len(outcome) == 1 and executor.table_ready_on_loop("t1")


def test_on_postgresql_commands_never_run_on_the_loop(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.create_database("on_loop")
    with EventStore.from_url(url, migrate=True) as store:
        host = TableHost(store, LocalDealer())
        app = TableApp(store, host, TableDirectory(store))
        executor = CommandExecutor(app)
        bot_table(host)
        app.handle_command("t1", START, "start", AS_SERVER, None)
        assert host.cached("t1") is not None
        assert not executor.table_ready_on_loop("t1")  # a commit there waits on the network


def test_the_table_list_follows_the_store(store: EventStore) -> None:
    host = TableHost(store, LocalDealer())
    directory = TableDirectory(store)
    host.create("open", options_for("house"), seat_count=3, visibility="public")
    host.create("mine", options_for("house"), seat_count=3, visibility="private")
    assert directory.refresh() == 2
    assert [s.table_id for s in directory.summaries(open_only=True)] == ["open"]
    for seat in range(3):
        host.decide_and_append("open", g.SitDown(seat, f"p{seat}"), f"s{seat}", "server")
    host.decide_and_append("open", g.StartGame(), "go", "server")
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
        host.decide_and_append(
            table_id, g.SitDown(seat, f"{table_id}-p{seat}"), f"{table_id}-s{seat}", "x"
        )


def test_a_new_replica_lists_the_tables_without_reading_the_log_again(
    either_store: EventStore,
) -> None:
    host = TableHost(either_store, LocalDealer())
    for n in range(5):
        host.create(f"t{n}", options_for("house"), seat_count=3, visibility="public")
    _seat_all(host, "t0", 3)
    host.decide_and_append("t0", g.StartGame(), "go", "server")
    first = TableDirectory(settle(either_store))
    first.refresh()
    listed = first.summaries()
    assert [s.table_id for s in listed] == [f"t{n}" for n in range(5)]
    assert [s.table_id for s in first.summaries(open_only=True)] == ["t1", "t2", "t3", "t4"]
    # A replica that starts now (or this one after a restart) reads the rows.
    counting = ReadCounting(either_store.engine)
    again = TableDirectory(counting)
    assert again.summaries() == listed
    assert again.refresh() == 0 and counting.events_read == 0
    host.decide_and_append("t1", g.SitDown(0, "late"), "late", "late")
    settle(either_store)
    assert again.refresh() == 1 and counting.events_read <= 3  # the event, and t1's stream
    assert next(s for s in again.summaries() if s.table_id == "t1").seated == 1


def test_a_replica_lists_its_own_changes_without_reading_their_streams_again(
    either_store: EventStore,
) -> None:
    """A table this replica noted after its commands is taken as noted: the refresh
    reads the batch of new events once and neither reads the table's stream nor needs
    to fold it (a fresh directory, empty cache, would otherwise read the stream)."""
    host = TableHost(either_store, LocalDealer())
    host.create("t1", options_for("house"), seat_count=3, visibility="public")
    TableDirectory(settle(either_store)).refresh()
    _seat_all(host, "t1", 3)
    settle(either_store)
    counting = ReadCounting(either_store.engine)
    replica = TableDirectory(counting)
    noted = host.cached("t1")
    assert noted is not None and noted.version == 4
    replica.note(noted)
    assert replica.refresh() == 3
    assert counting.events_read == 3  # the batch only: t1's stream was not read
    listed = next(s for s in replica.summaries() if s.table_id == "t1")
    assert listed.seated == 3 and listed.version == 4
    # Without the note, a fresh replica reads the table's stream to fold the batch on.
    host.decide_and_append("t1", g.StartGame(), "go", "server")
    settle(either_store)
    fresh_counting = ReadCounting(either_store.engine)
    assert TableDirectory(fresh_counting).refresh() >= 1
    assert fresh_counting.events_read > 1


@pytest.mark.parametrize("cached_tables", [2_000, 1], ids=["cached", "evicted"])
def test_replicas_taking_turns_keep_every_row_right(
    either_store: EventStore, cached_tables: int
) -> None:
    """Each replica folds what the other did not, from its cache or the table's stream.

    (Each refresh comes after ``settle``: on PostgreSQL a refresh folds only what every
    transaction older than the append's, in any database of the server, has let through.)"""
    host = TableHost(either_store, LocalDealer())
    replicas = [TableDirectory(either_store, cached_tables=cached_tables) for _ in range(2)]
    for n in range(3):
        host.create(f"t{n}", options_for("house"), seat_count=3, visibility="public")
    for step, (table_id, seat) in enumerate(
        [("t0", 0), ("t1", 0), ("t0", 1), ("t2", 0), ("t0", 2), ("t1", 1), ("t1", 2)]
    ):
        host.decide_and_append(table_id, g.SitDown(seat, f"{table_id}-{seat}"), f"c{step}", "x")
        settle(either_store)
        replicas[step % 2].refresh()
    host.decide_and_append("t0", g.StartGame(), "go", "server")
    settle(either_store)
    replicas[1].refresh()
    expected = [Summary.of(host.load(f"t{n}")) for n in range(3)]
    for replica in replicas:
        assert replica.summaries() == expected
        assert [s.table_id for s in replica.summaries(open_only=True)] == ["t2"]


def test_a_replica_behind_on_a_table_reads_only_the_events_it_missed(
    either_store: EventStore,
) -> None:
    """Replicas taking turns: the other replica's refresh folded an event of a table this
    one has cached; this one's next refresh reads that event to catch its cache up, not
    the table's stream from its start (which made every refresh cost the table's age)."""
    host = TableHost(either_store, LocalDealer())
    host.create("t0", options_for("house"), seat_count=3, visibility="public")
    counting = ReadCounting(either_store.engine)
    mine, other = TableDirectory(counting), TableDirectory(either_store)
    for seat, directory in enumerate((mine, other)):
        host.decide_and_append("t0", g.SitDown(seat, f"p{seat}"), f"c{seat}", "x")
        settle(either_store)
        directory.refresh()
    host.decide_and_append("t0", g.SitDown(2, "p2"), "c2", "x")
    settle(either_store)
    counting.events_read = 0
    assert mine.refresh() == 1
    assert counting.events_read == 2  # the new event, and the one the other replica folded
    assert mine.summaries() == [Summary.of(host.load("t0"))]


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
        host.decide_and_append("t3", g.SitDown(seat, player, bot), f"sit-{seat}", "server")
    host.decide_and_append("t3", g.StartGame(), "start", "server")
    ann = gpb.Actor(player_id="ann", seat=0)
    app.handle_command("t3", translate(gpb.Command(leave=gpb.Leave(seat=0))), "leave", ann, None)
    assert host.load("t3").game.seats[0].leaving  # bob, a human, holds the round up
    before = host.load("t3").version
    for command in (
        gpb.Command(**{"pass": gpb.Pass(seat=0)}),
        gpb.Command(react=gpb.React(seat=0, reaction="wave")),
        gpb.Command(return_cards=gpb.ReturnCards(seat=0, cards=["3C"])),
        gpb.Command(leave=gpb.Leave(seat=0)),
    ):
        with pytest.raises(ServiceError) as refused:
            app.handle_command(
                "t3", translate(command), f"after-{command.WhichOneof('kind')}", ann, None
            )
        assert refused.value.reason == "SEAT_LEFT"
    assert host.load("t3").version == before


# --------------------------------------------------------------------------- paged reads
async def test_readers_page_through_a_table_longer_than_one_response(store: EventStore) -> None:
    """The service returns at most ``max_read`` events; the gateway and table client page."""
    clock = GameClock()  # the reactions 2 s apart, within the seat's rate
    host = TableHost(store, LocalDealer(), clock=clock)
    app = TableApp(store, host, TableDirectory(store), max_read=7)
    host.create("long", options_for("club"), seat_count=4)
    host.decide_and_append("long", g.SitDown(0, "ann"), "sit", "ann")
    for n in range(30):
        clock.wait(2)
        host.append_reaction("long", 0, "wave", f"r{n}", "ann")
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
    client = TableClient(address, page=7)
    try:
        read = client.read_events
        assert [e.version for e in await read("long", 0)] == list(range(1, total + 1))
        assert [e.version for e in await read("long", 3, 16)] == list(range(4, 20))
        assert [e.version for e in await read("long", 25, 100)] == list(range(26, 33))
        assert await read("long", total) == []
        # A page smaller than the service's cap pages too.
        small = TableClient(address, page=4)
        assert len(await small.read_events("long", 0)) == total
        await small.close()
    finally:
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


def test_a_seat_command_naming_no_seat_acts_for_the_seat_its_actor_holds_then(
    store: EventStore,
) -> None:
    """Seats change between rounds (change_seats): a player's commands that name no seat
    follow them to their new seat, decided on the table itself; one naming their old
    seat is NOT_YOUR_SEAT. (Fixed deals: p0 then finishes in another place than first.)"""
    host = TableHost(store, LocalDealer(secret_for=fixed_secret))
    app = TableApp(store, host, TableDirectory(store))
    options = options_for("classic", {"game_end": "rounds:4", "change_seats": "true"})
    host.create("moves", options, seat_count=4, host_player_id="p0")
    host.decide_and_append("moves", g.SitDown(0, "p0"), "sit-0", "server")
    for seat in (1, 2, 3):
        host.decide_and_append("moves", g.SitDown(seat, f"b{seat}", True), f"sit-{seat}", "p0")
    p0 = gpb.Actor(player_id="p0")
    played_at: set[int] = set()
    old_seat_refused = False
    for n in range(400):
        table = host.load("moves")
        seat = seat_of(table.game, "p0")
        assert seat is not None
        view = table_view(table, seat)
        if view.phase == "game_over":
            break
        if view.phase == "lobby":
            message = gpb.Command(start_game=gpb.StartGame())
        elif view.phase == "between_rounds":
            message = gpb.Command(next_round=gpb.NextRound())
        else:
            action = view.round.legal[0]
            if action.verb == "play":
                message = gpb.Command(play_cards=gpb.PlayCards(cards=action.cards))
            elif action.verb == "pass":
                message = gpb.Command(**{"pass": gpb.Pass()})
            else:
                message = gpb.Command(return_cards=gpb.ReturnCards(cards=action.cards))
            played_at.add(seat)
            if seat != 0 and not old_seat_refused:
                named = gpb.Command()
                named.CopyFrom(message)
                getattr(named, message.WhichOneof("kind")).seat = 0
                with pytest.raises(ServiceError, match="NOT_YOUR_SEAT"):
                    app.handle_command("moves", translate(named), f"old-{n}", p0, None)
                old_seat_refused = True
        app.handle_command("moves", translate(message), f"move-{n}", p0, None)
    assert view.phase == "game_over"
    assert len(played_at) > 1 and old_seat_refused  # p0 moved, and acted where they sat
    assert verify_table(store.read_stream(stream_id("moves"))).ok


def test_a_retried_command_naming_no_seat_gets_its_first_outcome_on_any_replica(
    store: EventStore,
) -> None:
    """A play whose answer was lost (its replica died after the commit) is sent again with
    its command id: the same replica, or another whose copy of the table is from before the
    player sat down, answers with the first outcome and writes nothing. The same id sent for
    another command is COMMAND_CONFLICT."""
    first_host = TableHost(store, LocalDealer(secret_for=fixed_secret))
    first = TableApp(store, first_host, TableDirectory(store))
    first_host.create("again", options_for("classic"), seat_count=4, host_player_id="p0")
    other_host = TableHost(store, LocalDealer(secret_for=fixed_secret))
    other = TableApp(store, other_host, TableDirectory(store))
    other_host.load("again")  # this replica's copy: no one seated yet
    first_host.decide_and_append("again", g.SitDown(0, "p0"), "sit-0", "server")
    for seat in (1, 2, 3):
        first_host.decide_and_append("again", g.SitDown(seat, f"b{seat}", True), f"s{seat}", "p0")
    p0 = gpb.Actor(player_id="p0")
    start = translate(gpb.Command(start_game=gpb.StartGame()))
    first.handle_command("again", start, "start", p0, None)
    view = table_view(first_host.load("again"), 0)
    assert view.round.to_act == 0  # the bots moved until it is the person's turn
    play = gpb.Command(play_cards=gpb.PlayCards(cards=view.round.legal[0].cards))
    done = first.handle_command("again", translate(play), "play-1", p0, None)
    written = store.current_version(stream_id("again"))
    for replica in (first, other):
        again = replica.handle_command("again", translate(play), "play-1", p0, None)
        assert (again.version, again.events) == (done.version, done.events)
    assert store.current_version(stream_id("again")) == written
    passed = translate(gpb.Command(**{"pass": gpb.Pass()}))
    with pytest.raises(CommandConflict):
        other.handle_command("again", passed, "play-1", p0, None)
    assert store.current_version(stream_id("again")) == written
