"""The table service end to end: real processes (dealer, table), real NATS, SQLite and PostgreSQL.

Each backend gets its own stack, JetStream stream and subject prefix. The
tests drive the service through its gRPC API only and look at the store and
the JetStream stream directly.
"""

from __future__ import annotations

import asyncio
import itertools
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import nats
import pytest

from president.audit import verify_table
from president.game.v1 import game_pb2 as gpb
from president.rules.cards import FULL_DECK, names
from president.servicekit.command_stream import CommandStream
from president.servicekit.errors import Code, ServiceError
from president.servicekit.grpc_errors import aio_error_info
from president.servicekit.launcher import NatsServer, Stack
from president.servicekit.table_client import TableClient
from president.services.gateway.upstream.owners import LeaseOwners
from president.store import StoredEvent, verify_chain
from president.table.v1 import table_pb2 as pb
from tests.support.servers import isolated_env, store_databases
from tests.support.service_stack import service_stack
from tests.support.table_service import (
    SERVER,
    Replica,
    Tables,
    check_exactly_once,
    command_id,
    delete_bucket,
    player,
    refusal,
    start_replica,
    wait_relayed,
)
from tests.support.table_service import (
    table_events as events_of,
)

SERVICES = ("dealer", "table")
StatusCode = grpc.StatusCode


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def table_stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, nats_url: str
) -> Iterator[Stack]:
    """The dealer and the table service on one store, with a JetStream stream of their own."""
    workdir = tmp_path_factory.mktemp(f"table-{request.param}")
    with (
        store_databases(request, workdir, "table") as (database, env),
        service_stack(
            workdir, database, nats_url, SERVICES, {**env, "PRESIDENT_DEALER_CALL_SECONDS": "1"}
        ) as stack,
    ):
        yield stack


def stream_of(stack: Stack) -> str:
    return stack.env["PRESIDENT_STREAM"]


def prefix_of(stack: Stack) -> str:
    return stack.env["PRESIDENT_SUBJECT_PREFIX"]


def table_events(stack: Stack, table_id: str) -> list[StoredEvent]:
    return events_of(stack.database_url, table_id)


async def test_a_bot_game_ends_and_its_log_verifies(table_stack: Stack) -> None:
    async with Tables(table_stack.address("table")) as tables:
        table_id = await tables.bot_table(options={"game_end": "rounds:2"})
        moves = await tables.play_to_end(table_id, 0)
        final = await tables.view(table_id, 0)
    assert moves > 0
    assert final.phase == "game_over" and list(final.winners)
    events = table_events(table_stack, table_id)
    assert final.version == events[-1].version
    assert verify_chain(events) is None
    report = verify_table(events)
    assert report.ok, report.problem
    assert report.rounds_verified == 2
    # Bots acted as themselves, the human as p0, deals and reveals as the server.
    actors = Counter(str(e.metadata["actor"]).split(":")[0] for e in events)
    assert actors["bot"] > 0 and actors["p0"] > 0 and actors["server"] > 0


@pytest.mark.parametrize("streamed", [False, True], ids=["calls", "stream"])
async def test_refusals_carry_status_and_reason_and_change_nothing(
    table_stack: Stack, streamed: bool
) -> None:
    async with Tables(table_stack.address("table"), streamed=streamed) as tables:
        table_id = await tables.bot_table()
        view = await tables.view(table_id, 0)
        assert view.round.to_act == 0  # bots moved until the human's turn
        hand = list(view.round.hand)
        missing = next(card for card in names(FULL_DECK) if card not in hand)
        version, trick = view.version, view.round.trick_version

        def play(cards: list[str], seat: int = 0, trick_version: int = trick) -> gpb.Command:
            return gpb.Command(
                play_cards=gpb.PlayCards(seat=seat, cards=cards, trick_version=trick_version)
            )

        ex, t, me = tables.execute, table_id, player(0)
        impostor = gpb.Actor(player_id="p0", seat=1)
        bad, denied, aborted = "INVALID_ARGUMENT", "PERMISSION_DENIED", "ABORTED"
        failed, missing_table = "FAILED_PRECONDITION", ("NOT_FOUND", "TABLE_NOT_FOUND")
        react = [
            gpb.Command(react=gpb.React(seat=0, reaction="Thumbs Up!")),
            gpb.Command(react=gpb.React(seat=1, reaction="wow")),
        ]
        sit = [
            gpb.Command(sit_down=gpb.SitDown(seat=1, player_id="x")),
            gpb.Command(sit_down=gpb.SitDown(seat=9, player_id="x")),
        ]
        remove = gpb.Command(leave=gpb.Leave(seat=1, removed=True))
        stale_timer = pb.TimeoutRequest(table_id=t, timer_key=0, game_no=1, round_no=7)
        cases = [
            (ex(t, play(["ZZ"]), me), bad, "MALFORMED_CARDS"),
            (ex(t, play([]), me), bad, "MALFORMED_CARDS"),
            (ex(t, play([hand[0], hand[0].lower()]), me), bad, "NOT_IN_HAND"),
            (ex(t, play([missing]), me), bad, "NOT_IN_HAND"),
            (ex(t, play([hand[0]], seat=1), me), denied, "NOT_YOUR_SEAT"),
            (ex(t, play([hand[0]], seat=1), impostor), denied, "NOT_YOUR_SEAT"),
            (ex(t, play([hand[0]], seat=1), SERVER), failed, "NOT_YOUR_TURN"),
            (ex(t, play([hand[-1]], trick_version=trick + 1), me), aborted, "STALE"),
            (ex(t, play([hand[-1]]), me, expected_version=version - 1), aborted, "STALE"),
            (ex(t, gpb.Command(), me), bad, "MISSING_COMMAND"),
            (ex(t, play([hand[-1]]), gpb.Actor()), bad, "MISSING_ACTOR"),
            (ex(t, react[0], me), bad, "INVALID_REACTION"),
            (ex(t, react[1], me), denied, "NOT_YOUR_SEAT"),
            (ex(t, sit[0]), failed, "SEAT_TAKEN"),
            (ex(t, sit[1]), bad, "NO_SUCH_SEAT"),
            (ex(t, gpb.Command(next_round=gpb.NextRound())), failed, "WRONG_PHASE"),
            (ex(t, remove, me), denied, "NOT_HOST"),
            (ex("nosuchtable", play([hand[0]]), me), *missing_table),
            (ex("bad id!", play([hand[0]]), me), bad, "INVALID_TABLE_ID"),
            (ex(t, play([hand[0]]), me, cid="x" * 500), bad, "INVALID_COMMAND_ID"),
            (tables.stub.Timeout(stale_timer), aborted, "STALE"),
            (tables.stub.Timeout(pb.TimeoutRequest(table_id="nosuchtable")), *missing_table),
            (tables.view(t, 9), bad, "NO_SUCH_SEAT"),
            (tables.stub.ReadEvents(pb.ReadEventsRequest(table_id="nosuchtable")), *missing_table),
            (tables.create(preset="chess"), bad, "INVALID_OPTIONS"),
            (tables.create(options={"jokers": "maybe"}), bad, "INVALID_OPTIONS"),
            (tables.create(seats=2), bad, "INVALID_OPTIONS"),
            (tables.create(visibility="secret"), bad, "INVALID_VISIBILITY"),
            (tables.create(table_id=t), "ALREADY_EXISTS", "TABLE_EXISTS"),
        ]  # fmt: skip
        for call, status, reason in cases:
            try:
                code, got_reason, message = await refusal(call)
            except AssertionError:
                raise AssertionError(f"expected {reason}: the call was accepted") from None
            assert (code.name, got_reason) == (status, reason), message
            assert message, f"{reason} has no sentence"
        after = await tables.view(table_id, 0)
        assert after.version == version and list(after.round.hand) == hand
        malformed = await refusal(tables.execute(table_id, play(["11H"]), player(0)))
        assert "is not a card" in malformed[2]

        # An accepted reaction is one more event; then the play still goes through.
        reacted = await tables.execute(
            table_id, gpb.Command(react=gpb.React(seat=0, reaction="thumbs_up")), player(0)
        )
        assert reacted.version == version + 1 and reacted.events == 1
        # The deal is random: seat 0 may have no play that beats the top, only a pass.
        legal = next((a for a in after.round.legal if a.verb == "play"), None)
        move = (
            play(list(legal.cards))
            if legal is not None
            else gpb.Command(**{"pass": gpb.Pass(seat=0, trick_version=trick)})
        )
        played = await tables.execute(table_id, move, player(0), expected_version=version + 1)
        assert played.version > version + 1 and played.events >= 1
        assert (await tables.view(table_id)).version == played.version  # bots' moves included
    events = table_events(table_stack, table_id)
    assert verify_chain(events) is None and verify_table(events).ok


async def test_one_stream_answers_commands_sent_at_once_each_by_its_request(
    table_stack: Stack,
) -> None:
    """Answers come back as commands finish, each to its own caller, refusals included.

    The commands, sent at once, go in one stream message; the answers come in
    as few as finish together.
    """
    sent: list[int] = []  # commands per request message
    answered: list[int] = []  # answers per response message

    class Observed:
        """The ExecuteCommands call, counting what each message carries."""

        def __init__(self, stub: Any, requests: AsyncIterator[pb.ExecuteCommandsRequest]) -> None:
            async def counted() -> AsyncIterator[pb.ExecuteCommandsRequest]:
                async for message in requests:
                    sent.append(len(message.commands))
                    yield message

            self._call = stub.ExecuteCommands(counted())

        def cancel(self) -> bool:
            return bool(self._call.cancel())

        async def _answers(self) -> AsyncIterator[pb.ExecuteCommandsResponse]:
            async for message in self._call:
                answered.append(len(message.answers))
                yield message

        def __aiter__(self) -> AsyncIterator[pb.ExecuteCommandsResponse]:
            return self._answers()

    async with Tables(table_stack.address("table"), streamed=True) as tables:
        tables.commands = CommandStream(lambda requests: Observed(tables.stub, requests))
        table_id = await tables.bot_table()
        others = [await tables.bot_table() for _ in range(3)]
        view = await tables.view(table_id, 0)
        hand = list(view.round.hand)
        trick = view.round.trick_version

        def play(cards: list[str], seat: int = 0) -> gpb.Command:
            return gpb.Command(
                play_cards=gpb.PlayCards(seat=seat, cards=cards, trick_version=trick)
            )

        wave = gpb.Command(react=gpb.React(seat=0, reaction="wave"))
        refused = {
            "MALFORMED_CARDS": tables.execute(table_id, play(["ZZ"]), player(0)),
            "NOT_YOUR_SEAT": tables.execute(table_id, play([hand[0]], seat=1), player(0)),
            "MISSING_COMMAND": tables.execute(table_id, gpb.Command(), player(0)),
            "TABLE_NOT_FOUND": tables.execute("nosuchtable", play([hand[0]]), player(0)),
            "INVALID_TABLE_ID": tables.execute("bad id!", play([hand[0]]), player(0)),
        }
        accepted = [tables.execute(other, wave, player(0)) for other in others]
        results = await asyncio.gather(*(refusal(call) for call in refused.values()), *accepted)
    reasons = [reason for _code, reason, _message in results[: len(refused)]]
    assert reasons == list(refused)
    commands = len(refused) + len(accepted)
    assert sent[-1] == commands  # the bot tables' commands went before, one by one
    assert sum(answered) == sum(sent)  # each command answered once
    for other, answer in zip(others, results[len(refused) :], strict=True):
        assert isinstance(answer, pb.ExecuteCommandResponse) and answer.events == 1
        assert table_events(table_stack, other)[-1].version == answer.version


async def test_a_command_as_large_as_a_public_request_is_refused_alone(
    table_stack: Stack,
) -> None:
    """The gateway forwards a client's cards as sent. A play as large as a public request
    (256 KiB of card texts, more with its ids) and two plays of 100 KB sent at once are
    each MALFORMED_CARDS, and the reactions sent with them on the same stream run; so
    does a unary call with the largest."""
    async with Tables(table_stack.address("table"), streamed=True) as tables:
        table_id = await tables.bot_table()
        largest = gpb.Command(play_cards=gpb.PlayCards(cards=["3C"] * 65_534))
        large = gpb.Command(play_cards=gpb.PlayCards(cards=["3C"] * 25_000))
        wave = gpb.Command(react=gpb.React(reaction="wave"))
        results = await asyncio.gather(
            *(refusal(tables.execute(table_id, play, player(0))) for play in (largest, large)),
            refusal(tables.execute(table_id, large, player(0))),
            *(tables.execute(table_id, wave, player(0)) for _ in range(3)),
        )
        for code, reason, message in results[:3]:
            assert (code, reason) == (Code.INVALID_ARGUMENT, "MALFORMED_CARDS")
            assert message.startswith("a play or a return has at most 5 cards, not ")
        assert all(isinstance(done, pb.ExecuteCommandResponse) for done in results[3:])
        request = pb.ExecuteCommandRequest(
            table_id=table_id, command_id=command_id(), actor=player(0), command=largest
        )
        assert request.ByteSize() > 256 * 1024
        assert (await refusal(tables.stub.ExecuteCommand(request)))[1] == "MALFORMED_CARDS"
    # A seat command that names no seat acts for its actor's: seat 0 reacted three times.
    shown = [e for e in table_events(table_stack, table_id) if e.type.endswith("ReactionShown")]
    assert len(shown) == 3


async def test_a_command_stream_reopens_after_the_table_service_restarts(
    table_stack: Stack,
) -> None:
    """While the service is down a command is UNAVAILABLE; the same client goes on after."""
    async with Tables(table_stack.address("table"), streamed=True) as tables:
        table_id = await tables.bot_table()
        wave = gpb.Command(react=gpb.React(seat=0, reaction="wave"))
        before = await tables.execute(table_id, wave, player(0))
        table_stack.stop_one("table", kill=True)
        try:
            code, reason, message = await refusal(tables.execute(table_id, wave, player(0)))
            assert (code, reason) == (Code.UNAVAILABLE, "UPSTREAM_UNAVAILABLE"), message
        finally:
            table_stack.start_one("table")
        cid = command_id("after-restart")
        for _attempt in range(100):  # as a client would: retry with the same command id
            try:
                after = await tables.execute(table_id, wave, player(0), cid=cid)
                break
            except ServiceError as error:
                assert error.reason == "UPSTREAM_UNAVAILABLE", error
                await asyncio.sleep(0.1)
        else:
            raise AssertionError("the stream never reopened")
        again = await tables.execute(table_id, wave, player(0), cid=cid)
    assert (again.version, again.events) == (after.version, after.events)
    assert after.version == before.version + 1
    assert [e.version for e in after.committed] == [after.version] and not again.committed
    assert sum(1 for e in table_events(table_stack, table_id) if e.command_id == cid) == 1


async def test_metrics_count_plays_refusals_and_published_events(table_stack: Stack) -> None:
    async with Tables(table_stack.address("table")) as tables:
        table_id = await tables.bot_table(options={"game_end": "rounds:1"})
        view = await tables.view(table_id, 0)
        late = gpb.Command(**{"pass": gpb.Pass(seat=0, trick_version=view.round.trick_version + 1)})
        await refusal(tables.execute(table_id, late, player(0)))
        for_seat_1 = gpb.Command(**{"pass": gpb.Pass(seat=1)})
        await refusal(tables.execute(table_id, for_seat_1, player(0)))  # not p0's seat
        await tables.play_to_end(table_id, 0)
    await wait_relayed(table_stack.nats_url, stream_of(table_stack), table_stack.database_url)
    port = table_stack.metrics_ports["table"]
    text = await asyncio.to_thread(
        lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
    )
    metrics = text.decode()
    for line in (
        'president_plays_total{kind="play"}',
        'president_plays_total{kind="pass"}',
        'president_rejections_total{code="NOT_YOUR_SEAT"}',
        'president_rejections_total{code="STALE"}',
        "president_rounds_total",
        "president_active_tables",
        "president_events_published_total",
    ):
        assert line in metrics, line
    published = next(
        float(row.split()[-1])
        for row in metrics.splitlines()
        if row.startswith("president_events_published_total ")
    )
    assert published > 0


@pytest.mark.parametrize("streamed", [False, True], ids=["calls", "stream"])
async def test_a_retried_command_id_plays_once(table_stack: Stack, streamed: bool) -> None:
    async with Tables(table_stack.address("table"), streamed=streamed) as tables:
        table_id = await tables.bot_table()
        step = await tables.next_move(table_id, 0)
        assert step is not None
        cid = command_id("retry")
        first = await tables.execute(table_id, step[0], step[1], cid=cid)
        again = await tables.execute(table_id, step[0], step[1], cid=cid)
        assert (again.version, again.events) == (first.version, first.events)
        # The first answer carries every event committed (bots' moves too); a repeat none.
        assert [e.version for e in first.committed] == list(
            range(first.version - len(first.committed) + 1, first.version + 1)
        )
        assert len(first.committed) >= first.events and not again.committed
        assert (await tables.view(table_id)).version == first.version
        # The same id with another command is a conflicting retry: refused, running nothing.
        code, reason, _ = await refusal(
            tables.execute(table_id, gpb.Command(start_game=gpb.StartGame()), cid=cid)
        )
        assert (code, reason) == (Code.INVALID_ARGUMENT, "COMMAND_ID_REUSED")
        assert (await tables.view(table_id)).version == first.version
        # The same id for another table is refused.
        elsewhere = await tables.bot_table()
        code, reason, _ = await refusal(tables.execute(elsewhere, step[0], step[1], cid=cid))
        assert (code, reason) == (Code.INVALID_ARGUMENT, "COMMAND_ID_REUSED")
        # Creating a table is idempotent by command id too, with or without a table id.
        created = [
            await tables.stub.CreateTable(
                pb.CreateTableRequest(options=gpb.TableOptions(preset="club"), command_id="mk-1")
            )
            for _ in range(2)
        ]
        assert created[0] == created[1]
    events = table_events(table_stack, table_id)
    assert sum(1 for e in events if e.command_id == cid) == first.events


async def test_a_dealer_outage_keeps_the_start_and_the_deal_follows_later(
    table_stack: Stack,
) -> None:
    async with Tables(table_stack.address("table")) as tables:
        table_id = await tables.create(seats=3)
        for seat in range(3):
            sit = gpb.SitDown(seat=seat, player_id=f"p{seat}", is_bot=seat > 0)
            await tables.execute(table_id, gpb.Command(sit_down=sit))
        table_stack.stop_one("dealer")
        start = gpb.Command(start_game=gpb.StartGame())
        try:
            # Committed, so answered OK (issue 14, item 6): the deal is the server's to finish.
            first = await tables.execute(table_id, start, cid=f"go-{table_id}")
        finally:
            table_stack.start_one("dealer")
        assert first.events == 1
        assert (await tables.view(table_id)).phase == "dealing"  # the start is kept
        again = await tables.execute(table_id, start, cid=f"go-{table_id}")  # the client retries
        assert again.events == 1
        view = await tables.view(table_id, 0)
        assert view.phase == "round" and view.round.fingerprint and view.round.hand
    assert verify_table(table_events(table_stack, table_id)).ok


async def test_rapid_mode_first_legal_play_wins(table_stack: Stack) -> None:
    async with Tables(table_stack.address("table")) as tables:
        accepted, refused = await rapid_race(tables, tables, table_stack)
    assert accepted == 1
    assert refused and set(refused) == {(StatusCode.ABORTED, "STALE")}


async def rapid_race(
    first: Tables, second: Tables, stack: Stack, calls: int = 12
) -> tuple[int, list[tuple[grpc.StatusCode, str]]]:
    """Many plays from many seats on one trick version, through ``first`` and ``second``."""
    seats = 6
    table_id = await first.bot_table(humans=tuple(range(seats)), seats=seats, preset="house-rapid")
    for attempt in range(4):
        views = [await first.view(table_id, seat) for seat in range(seats)]
        plays = [
            (seat, list(action.cards))
            for seat, view in enumerate(views)
            for action in view.round.legal
            if action.verb == "play"
        ]
        if len({seat for seat, _ in plays}) >= 3 or attempt == 3:
            break
        seat, cards = plays[0]  # only the leader may play: let it lead, then race on the answer
        await first.execute(
            table_id,
            gpb.Command(
                play_cards=gpb.PlayCards(
                    seat=seat, cards=cards, trick_version=views[0].round.trick_version
                )
            ),
            player(seat),
        )
    assert plays, "nobody can play"
    trick, version = views[0].round.trick_version, views[0].version
    chosen = list(itertools.islice(itertools.cycle(plays), calls))
    results = await asyncio.gather(
        *(
            (first if index % 2 == 0 else second).execute(
                table_id,
                gpb.Command(play_cards=gpb.PlayCards(seat=seat, cards=cards, trick_version=trick)),
                player(seat),
            )
            for index, (seat, cards) in enumerate(chosen)
        ),
        return_exceptions=True,
    )
    refused = []
    for result in results:
        if isinstance(result, grpc.aio.AioRpcError):
            info = await aio_error_info(result)
            refused.append((result.code(), info.reason if info else ""))
        elif isinstance(result, BaseException):
            raise result
    accepted = sum(1 for result in results if isinstance(result, pb.ExecuteCommandResponse))
    events = table_events(stack, table_id)
    played = [e for e in events if e.version > version and e.type.endswith(".CardsPlayed")]
    assert len(played) == accepted
    return accepted, refused


async def test_lists_tables_from_the_store(table_stack: Stack) -> None:
    async with Tables(table_stack.address("table")) as tables:
        public = await tables.create(seats=3, visibility="public")
        practice = await tables.create(seats=3)
        listed = (await tables.stub.ListTables(pb.ListTablesRequest())).tables
        assert {public, practice} <= {t.table_id for t in listed}
        open_ids = {
            t.table_id
            for t in (await tables.stub.ListTables(pb.ListTablesRequest(open_only=True))).tables
        }
        assert public in open_ids and practice not in open_ids
        for seat in range(3):
            sit = gpb.SitDown(seat=seat, player_id=f"p{seat}")
            await tables.execute(public, gpb.Command(sit_down=sit))
        summary = next(
            t
            for t in (await tables.stub.ListTables(pb.ListTablesRequest())).tables
            if t.table_id == public
        )
        assert (summary.seated, summary.seat_count, summary.phase) == (3, 3, "lobby")
        assert summary.options.preset == "classic" and summary.options.options["game_end"]
        open_ids = {
            t.table_id
            for t in (await tables.stub.ListTables(pb.ListTablesRequest(open_only=True))).tables
        }
        assert public not in open_ids  # full  # fmt: skip
        read = await tables.stub.ReadEvents(
            pb.ReadEventsRequest(table_id=public, after_version=1, limit=2)
        )
        assert [e.version for e in read.events] == [2, 3]
        assert all(e.type.endswith("SeatTaken") and e.hash for e in read.events)


async def test_outbox_publishes_every_stored_event_once_in_order(table_stack: Stack) -> None:
    async with Tables(table_stack.address("table")) as tables:
        games = [await tables.bot_table(options={"game_end": "rounds:1"}) for _ in range(3)]
        await asyncio.gather(*(tables.play_to_end(table_id, 0) for table_id in games))
    count = await check_exactly_once(
        table_stack.nats_url,
        stream_of(table_stack),
        table_stack.database_url,
        prefix_of(table_stack),
    )
    assert count > 100


async def test_kill_9_mid_game_loses_and_doubles_nothing(table_stack: Stack) -> None:
    address = table_stack.address("table")
    async with Tables(address) as tables:
        table_id = await tables.bot_table(options={"game_end": "rounds:2"})
    accepted: list[str] = []
    crashes = 0
    for moves in itertools.count():
        async with Tables(address) as tables:
            step = await tables.next_move(table_id, 0)
            if step is None:
                break
            cid = command_id("crash")
            if moves % 4 == 1 and crashes < 3:
                # Kill the table service while the command (and its bots) may be under way.
                call = asyncio.ensure_future(tables.execute(table_id, step[0], step[1], cid=cid))
                await asyncio.sleep(0.004 * crashes)
                table_stack.stop_one("table", kill=True)
                await asyncio.gather(call, return_exceptions=True)
                crashes += 1
            else:
                await tables.execute(table_id, step[0], step[1], cid=cid)
                accepted.append(cid)
                continue
        table_stack.start_one("table")
        async with Tables(address) as tables:
            await tables.execute(table_id, step[0], step[1], cid=cid)  # the client retries
        accepted.append(cid)
    assert crashes == 3
    events = table_events(table_stack, table_id)
    assert events[-1].payload is not None and verify_table(events).ok
    by_command = Counter(e.command_id for e in events)
    assert all(by_command[cid] >= 1 for cid in accepted), "an accepted command was lost"
    await check_exactly_once(
        table_stack.nats_url,
        stream_of(table_stack),
        table_stack.database_url,
        prefix_of(table_stack),
    )


async def test_two_replicas_on_one_store_stay_consistent(table_stack: Stack) -> None:
    replica = start_replica(table_stack)
    try:
        async with (
            Tables(table_stack.address("table")) as first,
            Tables(replica.address) as second,
        ):
            table_id = await first.bot_table(options={"game_end": "rounds:1"})
            sent = []
            for turn in itertools.count():
                client = (first, second)[turn % 2]
                step = await client.next_move(table_id, 0)
                if step is None:
                    break
                cid = command_id("replica")
                await client.execute(table_id, step[0], step[1], cid=cid)
                sent.append(cid)
            one, two = await first.view(table_id, 0), await second.view(table_id, 0)
            assert one == two and one.phase == "game_over"
            accepted, refused = await rapid_race(first, second, table_stack)
            assert accepted == 1
            assert set(refused) == {(StatusCode.ABORTED, "STALE")}
            # A table only the first replica touched shows up in the second one's list.
            lone = await first.create(seats=3, visibility="public")
            for _ in range(100):
                listed = await second.stub.ListTables(pb.ListTablesRequest(open_only=True))
                if lone in {t.table_id for t in listed.tables}:
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("the second replica never listed the new table")
        events = table_events(table_stack, table_id)
        assert verify_chain(events) is None and verify_table(events).ok
        by_command = Counter(e.command_id for e in events)
        assert all(by_command[cid] >= 1 for cid in sent)
        await check_exactly_once(
            table_stack.nats_url,
            stream_of(table_stack),
            table_stack.database_url,
            prefix_of(table_stack),
        )
    finally:
        replica.stop()


async def test_with_leases_one_replica_serves_a_table_and_another_takes_over(
    table_stack: Stack,
) -> None:
    env = {"PRESIDENT_TABLE_LEASE_SECONDS": "1.5"}
    holder = start_replica(table_stack, "lease-a", env)
    other = start_replica(table_stack, "lease-b", env)
    try:
        async with Tables(holder.address) as first, Tables(other.address) as second:
            table_id = await first.bot_table(options={"game_end": "rounds:2"})
            for turn in range(8):  # every other call lands on the replica without the lease
                client = (first, second)[turn % 2]
                step = await client.next_move(table_id, 0)
                assert step is not None
                await client.execute(table_id, step[0], step[1])
            assert await asyncio.to_thread(holder.plays) > 0
            assert await asyncio.to_thread(other.plays) == 0, "the replica without the lease played"
        holder.stop(kill=True)
        async with Tables(other.address) as second:
            moves = await second.play_to_end(table_id, 0)  # takes the table over
        assert moves > 0 and await asyncio.to_thread(other.plays) > 0
        events = table_events(table_stack, table_id)
        assert verify_table(events).ok
        await check_exactly_once(
            table_stack.nats_url,
            stream_of(table_stack),
            table_stack.database_url,
            prefix_of(table_stack),
        )
    finally:
        holder.stop()
        other.stop()
        await delete_bucket(table_stack.nats_url, f"{stream_of(table_stack)}_TABLE_LEASES")


def handled(replica: Replica, method: str) -> float:
    """How many table requests (stream commands included) of ``method`` a replica answered."""
    url = f"http://127.0.0.1:{replica.metrics_port}/metrics"
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    return sum(
        float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith("president_grpc_requests_total{") and f'method="{method}"' in line
    )


async def test_the_gateway_sends_commands_straight_to_the_lease_holder(
    table_stack: Stack,
) -> None:
    """The gateway's table client reads the lease and skips the forwarding hop; when the
    holder dies, the service address takes the table over and the command still runs once."""
    env = {"PRESIDENT_TABLE_LEASE_SECONDS": "1.5"}
    holder = start_replica(table_stack, "lease-a", env)
    other = start_replica(table_stack, "lease-b", env)
    client = await nats.connect(table_stack.nats_url)
    owners = LeaseOwners(f"{stream_of(table_stack)}_TABLE_LEASES")
    owners.attach(client)
    # The table service's address is the replica without the lease.
    gateway_side = TableClient(other.address, owners=owners)
    try:
        async with Tables(holder.address) as direct:
            table_id = await direct.bot_table(options={"game_end": "rounds:2"})
            calls_before = await asyncio.to_thread(handled, holder, "ExecuteCommand")
            for _ in range(6):
                step = await direct.next_move(table_id, 0)
                assert step is not None
                request = pb.ExecuteCommandRequest(
                    table_id=table_id, command_id=command_id(), actor=step[1], command=step[0]
                )
                await gateway_side.submit(request)
        assert await asyncio.to_thread(handled, holder, "ExecuteCommands") == 6
        assert await asyncio.to_thread(handled, other, "ExecuteCommands") == 0
        # None came forwarded (as a call) from the other replica.
        assert await asyncio.to_thread(handled, holder, "ExecuteCommand") == calls_before
        holder.stop(kill=True)
        async with Tables(other.address) as survivor:
            step = await survivor.next_move(table_id, 0)
            assert step is not None
            request = pb.ExecuteCommandRequest(
                table_id=table_id, command_id=command_id(), actor=step[1], command=step[0]
            )
            version = (await gateway_side.submit(request)).version
            assert (await survivor.view(table_id, 0)).version >= version
        assert await asyncio.to_thread(handled, other, "ExecuteCommands") == 1
        events = table_events(table_stack, table_id)
        assert verify_table(events).ok
        # One append of the command (its events in a row; the store refuses a command id twice).
        versions = [e.version for e in events if e.command_id == request.command_id]
        assert versions and versions == list(range(versions[0], versions[0] + len(versions)))
    finally:
        await gateway_side.close()
        await client.close()
        holder.stop()
        other.stop()
        await delete_bucket(table_stack.nats_url, f"{stream_of(table_stack)}_TABLE_LEASES")


async def test_relay_waits_out_a_nats_restart(tmp_path: Path) -> None:
    nats_dir = tmp_path / "nats"
    server = NatsServer(nats_dir).start()
    env = isolated_env()
    stack = Stack(tmp_path / "stack", f"sqlite:///{tmp_path / 'president.db'}", server.url, env)
    try:
        stack.start(services=SERVICES)
        async with Tables(stack.address("table")) as tables:
            table_id = await tables.bot_table()
            await wait_relayed(server.url, env["PRESIDENT_STREAM"], stack.database_url)
            server.stop()
            for _ in range(6):  # NATS is down: commands are still accepted, events kept
                step = await tables.next_move(table_id, 0)
                assert step is not None
                await tables.execute(table_id, step[0], step[1])
            server = NatsServer(nats_dir, port=server.port).start()
            count = await check_exactly_once(
                server.url,
                env["PRESIDENT_STREAM"],
                stack.database_url,
                env["PRESIDENT_SUBJECT_PREFIX"],
            )
            assert count == (await tables.view(table_id)).version
    finally:
        stack.stop()
        server.stop()
