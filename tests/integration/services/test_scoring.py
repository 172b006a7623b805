"""Scoring end to end: real NATS, the dealer, table and scoring services as processes, on
SQLite and on PostgreSQL.

Bot games are played through the table service; the read models must agree
with the stored RoundEnded and GameEnded events (folded here through the
engine, independently of scoring's projection), after a crash and restart
of scoring mid-stream too, and an envelope delivered again changes nothing.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import nats
import pytest

from president import codec
from president.events.v1 import events_pb2 as pb
from president.hosting import events as ev
from president.hosting.projection import fold, table_from_created
from president.rules import game as g
from president.rules import round as rnd
from president.scoring.v1 import scoring_pb2 as spb
from president.scoring.v1 import scoring_pb2_grpc
from president.servicekit.grpc_errors import error_info
from president.servicekit.launcher import Stack
from president.servicekit.nats import Subjects
from tests.support.servers import store_databases
from tests.support.service_stack import Tables, service_stack, wait_until

pytestmark = pytest.mark.slow
SERVICES = ("dealer", "table", "scoring")


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def scoring_stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, nats_url: str
) -> Iterator[Stack]:
    workdir = tmp_path_factory.mktemp(f"scoring-{request.param}")
    with (
        store_databases(request, workdir, "stack") as (database, env),
        service_stack(workdir, database, nats_url, SERVICES, env) as stack,
    ):
        yield stack


@pytest.fixture(scope="module")
def tables(scoring_stack: Stack) -> Iterator[Tables]:
    client = Tables(scoring_stack.address("table"))
    yield client
    client.close()


@pytest.fixture(scope="module")
def scoring(scoring_stack: Stack) -> Iterator[Any]:
    with grpc.insecure_channel(scoring_stack.address("scoring")) as channel:
        yield scoring_pb2_grpc.ScoringServiceStub(channel)


# -- what the events say, folded through the engine ------------------------------------


@dataclass
class Expected:
    standings: dict[str, spb.GetStandingsResponse] = field(default_factory=dict)
    games: dict[str, list[spb.GameResult]] = field(default_factory=dict)
    players: dict[str, spb.GetPlayerStatsResponse] = field(default_factory=dict)

    def player(self, player_id: str) -> spb.GetPlayerStatsResponse:
        if player_id not in self.players:
            self.players[player_id] = spb.GetPlayerStatsResponse(player_id=player_id)
        return self.players[player_id]


def expected(tables: Tables, table_ids: list[str]) -> Expected:
    out = Expected()
    for table_id in table_ids:
        envelopes = tables.events(table_id)
        created = codec.decode(envelopes[0].type, envelopes[0].payload)
        assert isinstance(created, ev.TableCreated)
        table = table_from_created(created)
        games: list[spb.GameResult] = []
        last_round: dict[int, str] = {}
        for item in envelopes[1:]:
            event = codec.decode(item.type, item.payload)
            players = {i: seat.player for i, seat in enumerate(table.game.seats) if seat.player}
            if isinstance(event, g.SeatTaken):
                out.player(event.player)
            if isinstance(event, rnd.RoundEnded):
                last_round = {seat: players[seat] for seat in event.standings}
                for place, seat in enumerate(event.standings):
                    stats = out.player(players[seat])
                    stats.rounds_played += 1
                    stats.rounds_won += place == 0
                    stats.points += event.points[seat]
                    places = list(stats.places) + [0] * (place + 1 - len(stats.places))
                    places[place] += 1
                    stats.places[:] = places
            table = fold(table, event, item.version)
            if isinstance(event, g.GameEnded):
                game = table.game
                games.append(
                    spb.GameResult(
                        game_no=game.game_no,
                        winners=event.winners,
                        winner_player_ids=[last_round[seat] for seat in event.winners],
                        stopped=event.stopped,
                        totals=game.scores,
                        rounds=game.round_no,
                    )
                )
                if not event.stopped:
                    for seat, player in players.items():
                        stats = out.player(player)
                        stats.games_played += 1
                        stats.games_won += seat in event.winners
        game = table.game
        out.games[table_id] = games
        out.standings[table_id] = spb.GetStandingsResponse(
            table_id=table_id,
            game_no=game.game_no,
            rounds_played=game.round_no,
            standings=[
                spb.Standing(
                    seat=seat,
                    player_id=player,
                    total=game.scores[seat],
                    last_place=(game.standings.index(seat) + 1) if seat in game.standings else 0,
                )
                for seat, player in sorted(
                    {
                        **{i: s.player for i, s in enumerate(game.seats) if s.player},
                        **last_round,
                    }.items()
                )
                if player
            ],
            version=envelopes[-1].version,
        )
    return out


def caught_up(scoring: Any, tables: Tables, table_ids: list[str], timeout: float = 30) -> None:
    for table_id in table_ids:
        last = tables.events(table_id)[-1].version

        def probe(table_id: str = table_id, last: int = last) -> bool:
            try:
                response = scoring.GetStandings(
                    spb.GetStandingsRequest(table_id=table_id), timeout=5
                )
            except grpc.RpcError:
                return False
            return bool(response.version >= last)

        wait_until(probe, timeout, f"scoring to reach version {last} of {table_id}")


def check_agrees(scoring: Any, tables: Tables, table_ids: list[str]) -> Expected:
    caught_up(scoring, tables, table_ids)
    want = expected(tables, table_ids)
    for table_id in table_ids:
        standings = scoring.GetStandings(spb.GetStandingsRequest(table_id=table_id), timeout=5)
        assert standings == want.standings[table_id]
        results = scoring.GetGameResults(spb.GetGameResultsRequest(table_id=table_id), timeout=5)
        assert list(results.games) == want.games[table_id]
    for player_id, stats in want.players.items():
        got = scoring.GetPlayerStats(spb.GetPlayerStatsRequest(player_id=player_id), timeout=5)
        assert got == stats, player_id
    return want


def snapshot(scoring: Any, table_ids: list[str], players: list[str]) -> list[Any]:
    out: list[Any] = []
    for table_id in table_ids:
        out.append(scoring.GetStandings(spb.GetStandingsRequest(table_id=table_id), timeout=5))
        out.append(scoring.GetGameResults(spb.GetGameResultsRequest(table_id=table_id), timeout=5))
    for player_id in players:
        out.append(scoring.GetPlayerStats(spb.GetPlayerStatsRequest(player_id=player_id)))
    return out


TABLES = ["longgame", "shortgames"]


def test_scores_agree_with_the_stored_round_and_game_events(tables: Tables, scoring: Any) -> None:
    tables.create("longgame", "classic", 4, game_end="rounds:2")
    for seat in range(4):
        tables.sit("longgame", seat, f"p{seat}", bot=True)
    tables.create("shortgames", "house", 3, game_end="rounds:1")
    for seat, player in enumerate(["p0", "p1", "p4"]):
        tables.sit("shortgames", seat, player, bot=True)
    tables.start("longgame")
    tables.play_game("longgame")
    tables.play_again("longgame")
    tables.play_game("longgame")
    tables.start("shortgames")
    for _ in range(2):
        tables.play_again("shortgames")
    want = check_agrees(scoring, tables, TABLES)
    assert [game.game_no for game in want.games["longgame"]] == [1, 2]
    assert [game.rounds for game in want.games["shortgames"]] == [1, 1, 1]
    p0 = want.players["p0"]
    assert p0.rounds_played == 4 + 3
    assert p0.games_played == 2 + 3
    assert sum(p0.places) == p0.rounds_played


def test_restarting_scoring_mid_stream_counts_nothing_twice(
    scoring_stack: Stack, tables: Tables, scoring: Any
) -> None:
    tables.play_again("longgame")
    tables.play_again("shortgames")
    scoring_stack.stop_one("scoring", kill=True)  # while it consumes those events
    tables.play_game("longgame")
    tables.play_again("shortgames")
    scoring_stack.start_one("scoring")
    check_agrees(scoring, tables, TABLES)


async def _consumer_state(url: str, stream: str, durable: str) -> tuple[int, int, int]:
    """(last stream sequence, last delivered stream sequence, messages awaiting an ack)."""
    client = await nats.connect(url, connect_timeout=2)
    try:
        js = client.jetstream()
        info = await js.consumer_info(stream, durable)
        last = (await js.stream_info(stream)).state.last_seq
        return last, info.delivered.stream_seq, info.num_ack_pending
    finally:
        await client.close()


async def _publish_again(url: str, subjects: Subjects, envelopes: list[pb.EventEnvelope]) -> None:
    client = await nats.connect(url, connect_timeout=2)
    try:
        js = client.jetstream()
        for item in envelopes:
            table_id = item.stream_id.removeprefix("table-")
            await js.publish(
                subjects.table(table_id),
                item.SerializeToString(),
                headers={"Nats-Msg-Id": f"again-{uuid.uuid4().hex}"},
            )
    finally:
        await client.close()


def test_an_envelope_delivered_again_changes_nothing(
    scoring_stack: Stack, tables: Tables, scoring: Any
) -> None:
    caught_up(scoring, tables, TABLES)
    players = ["p0", "p1", "p2", "p3", "p4"]
    before = snapshot(scoring, TABLES, players)
    envelopes = tables.events("longgame")
    again = [
        item
        for item in envelopes
        if item.version == 1
        or item.type.rsplit(".", 1)[-1] in ("SeatTaken", "GameStarted", "RoundEnded", "GameEnded")
    ]
    assert len(again) > 8
    env = scoring_stack.base_env()
    subjects = Subjects(prefix=env["PRESIDENT_SUBJECT_PREFIX"], stream=env["PRESIDENT_STREAM"])
    url = scoring_stack.nats_url
    # Messages the killed scoring had fetched stay unacknowledged until their ack wait ends.
    _, _, unacked = asyncio.run(_consumer_state(url, subjects.stream, "scoring"))
    asyncio.run(_publish_again(url, subjects, again))

    def consumed() -> bool:
        last, delivered, waiting = asyncio.run(_consumer_state(url, subjects.stream, "scoring"))
        return delivered >= last and waiting <= unacked

    wait_until(consumed, 30, "scoring to consume the repeated envelopes", interval=0.2)
    assert snapshot(scoring, TABLES, players) == before
    check_agrees(scoring, tables, TABLES)


def test_queries_refuse_bad_or_unknown_input(scoring: Any) -> None:
    cases = [
        (
            scoring.GetStandings,
            spb.GetStandingsRequest(table_id="nope"),
            "NOT_FOUND",
            "TABLE_NOT_FOUND",
        ),
        (
            scoring.GetGameResults,
            spb.GetGameResultsRequest(table_id="nope"),
            "NOT_FOUND",
            "TABLE_NOT_FOUND",
        ),
        (
            scoring.GetStandings,
            spb.GetStandingsRequest(table_id="bad id!"),
            "INVALID_ARGUMENT",
            "INVALID_TABLE_ID",
        ),
        (
            scoring.GetGameResults,
            spb.GetGameResultsRequest(),
            "INVALID_ARGUMENT",
            "INVALID_TABLE_ID",
        ),
        (
            scoring.GetPlayerStats,
            spb.GetPlayerStatsRequest(player_id="nobody"),
            "NOT_FOUND",
            "PLAYER_NOT_FOUND",
        ),
        (
            scoring.GetPlayerStats,
            spb.GetPlayerStatsRequest(player_id=" "),
            "INVALID_ARGUMENT",
            "INVALID_PLAYER",
        ),
        (
            scoring.GetPlayerStats,
            spb.GetPlayerStatsRequest(player_id="x" * 201),
            "INVALID_ARGUMENT",
            "INVALID_PLAYER",
        ),
    ]
    for call, request, code, reason in cases:
        with pytest.raises(grpc.RpcError) as refused:
            call(request, timeout=5)
        assert refused.value.code().name == code
        info = error_info(refused.value)
        assert info is not None
        assert info.reason == reason
        assert refused.value.details()
