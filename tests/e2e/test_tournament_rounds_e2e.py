"""The round runner end to end: a 2-round Swiss tournament played through the real stack.

Four accounts enter a tournament of 3-seat house tables (one game of one
round per tournament round). At the start time the tournament service
commits, seats and opens each round's tables (two entrants and a bot each);
each entrant plays their seat through the gateway with the client's bot
helper, at the table GetTournament names. The service follows the tables'
logs, records each result, reveals the round's secret and draws the next,
then finishes the tournament. It is killed (kill -9) mid-round 1 and started
again: the round still finishes, and no step is appended twice or lost.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from president import tournament_codec as codec
from president.client import GatewayClient
from president.client.seat_bot import play_seat
from president.hosting.projection import fold_stored
from president.hosting.streams import stream_id as table_stream
from president.servicekit.launcher import Stack
from president.services.tournament.runner import game_places, table_id_of
from president.store import EventStore
from president.tournament.draw import check_draw
from president.tournament.state import Tournament, fold
from president.tournaments.v1 import tournaments_pb2 as tpb

PASSWORD = "a long enough passphrase"
ENTRANTS = 4
DEADLINE_SECONDS = 50


def _ms(moment: datetime) -> int:
    return round(moment.timestamp() * 1000)


def settings(starts_in: float) -> tpb.TournamentSettings:
    """Swiss, 2 rounds, 3-seat house tables playing one round each, bots without delay."""
    now = datetime.now(UTC)
    made = tpb.TournamentSettings(
        name="Quick Swiss",
        preset="house",
        format="swiss",
        rounds=2,
        table_size=3,
        capacity=8,
        opens_at_unix_ms=_ms(now - timedelta(minutes=1)),
        closes_at_unix_ms=_ms(now + timedelta(hours=1)),
        starts_at_unix_ms=_ms(now + timedelta(seconds=starts_in)),
    )
    made.options.update({"game_end": "rounds:1", "bot_delay_ms": "0"})
    return made


@pytest.fixture
def events(stack: Stack) -> Iterator[EventStore]:
    store = EventStore.from_url(stack.database_url)
    yield store
    store.close()


@pytest.fixture
async def players(stack: Stack) -> AsyncIterator[list[GatewayClient]]:
    first = GatewayClient.connect(stack.gateway)
    made = [first, *(first.sibling() for _ in range(ENTRANTS - 1))]
    for index, player in enumerate(made):
        await player.register(f"entrant{index}-{uuid.uuid4().hex[:8]}", PASSWORD)
    yield made
    await first.close()


def folded(store: EventStore, tournament_id: str) -> Tournament:
    state = fold(
        codec.decode(e.type, e.payload) for e in store.read_stream(f"tournament-{tournament_id}")
    )
    assert state is not None
    return state


async def play_my_tables(player: GatewayClient, tournament_id: str, played: list[str]) -> None:
    """Play this entrant's seat at each round's table as GetTournament names it."""
    while True:
        found = await _tolerant(lambda: player.tournament(tournament_id))
        if found is None:
            await asyncio.sleep(0.3)
            continue
        if found.status == "finished":
            return
        mine = [
            (table.table_id, list(table.seats).index(player.player_id))
            for rnd in found.rounds
            for table in rnd.tables
            if player.player_id in table.seats and not table.places
        ]
        fresh = [(t, s) for t, s in mine if t not in played]
        if not fresh:
            await asyncio.sleep(0.3)
            continue
        table_id, seat = fresh[0]
        player.table_id, player.seat = table_id, seat
        try:
            await play_seat(player, keep=False)
        except Exception:  # the table's game is not started yet: look again
            await asyncio.sleep(0.3)
            continue
        played.append(table_id)


async def _tolerant(call: object) -> tpb.Tournament | None:
    try:
        return await call()  # type: ignore[operator, no-any-return]
    except Exception:  # the service is restarting
        return None


async def test_a_swiss_tournament_runs_its_rounds_through_a_kill_of_its_service(
    stack: Stack, players: list[GatewayClient], events: EventStore
) -> None:
    host = players[0]
    created = await host.create_tournament(settings(starts_in=3))
    tid = created.tournament_id
    for player in players:
        await player.enter_tournament(tid)
    played: dict[str, list[str]] = {p.player_id: [] for p in players}
    playing = [asyncio.create_task(play_my_tables(p, tid, played[p.player_id])) for p in players]

    # Kill -9 the tournament service once round 1's tables are playing.
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not any(played.values()) and time.monotonic() < deadline:
        state = folded(events, tid)
        if state.rounds and state.rounds[0].seating is not None:
            first = table_id_of(tid, 1, 0)
            if len(events.read_stream(table_stream(first))) > 5:
                break
        await asyncio.sleep(0.1)
    assert not folded(events, tid).rounds[0].scored  # the kill comes mid-round 1
    stack.stop_one("tournament", kill=True)
    await asyncio.sleep(1)
    stack.start_one("tournament")

    await asyncio.wait_for(asyncio.gather(*playing), DEADLINE_SECONDS)
    state = folded(events, tid)
    assert state.status == "finished"
    assert len(state.rounds) == 2
    types = [
        e.type.removeprefix(codec.TYPE_PREFIX) for e in events.read_stream(f"tournament-{tid}")
    ]
    assert types.count("RoundDrawCommitted") == 2
    assert types.count("RoundSeated") == 2
    assert types.count("RoundRevealed") == 2
    assert types.count("TournamentFinished") == 1
    assert types.count("TableResultRecorded") + types.count("TableSettled") == 4

    for record in state.rounds:
        assert record.secret is not None and record.seating is not None
        # Seated as the committed draw draws it from the revealed secret.
        assert check_draw(record.secret, record.fingerprint, record.request, record.seating) is None
        assert len(record.seating) == 2
        for index, seats in enumerate(record.seating):
            table = fold_stored(
                None, events.read_stream(table_stream(table_id_of(tid, record.round_no, index)))
            )
            assert table is not None
            game = table.game
            # The drawn entrants sit in their drawn seats, a bot in the empty one.
            for seat, account in enumerate(seats):
                occupant = game.seats[seat]
                assert occupant.player == account if account else occupant.is_bot
            # One game, and its places are the ones recorded.
            assert game.game_no == 1 and game.phase == "game_over"
            assert record.places[index] == game_places(game.scores, game.standings)

    # Round 2's results follow their games' ends by the tables' subjects, well within
    # the runner's recheck of a table's log (RECHECK_SECONDS, 5 s) that a missed word needs.
    recorded_at = [
        datetime.fromisoformat(e.time)
        for e in events.read_stream(f"tournament-{tid}")
        if e.type.endswith("TableResultRecorded")
    ]
    ended_at = [
        datetime.fromisoformat(e.time)
        for index in range(2)
        for e in events.read_stream(table_stream(table_id_of(tid, 2, index)))
        if e.type.endswith("GameEnded")
    ]
    lags = [min(t for t in recorded_at if t >= end) - end for end in ended_at]
    print("round 2: game end to result recorded:", [f"{lag.total_seconds():.2f} s" for lag in lags])
    assert all(lag < timedelta(seconds=2.5) for lag in lags)

    read = await host.tournament(tid)
    assert read.status == "finished"
    assert [r.secret_hex for r in read.rounds] == [r.secret.hex() for r in state.rounds]  # type: ignore[union-attr]
    assert {s.account_id for s in read.standings} == {p.player_id for p in players}
    assert all(s.rounds_scored == 2 for s in read.standings)
    for rnd in read.rounds:
        assert [t.table_id for t in rnd.tables] == [
            table_id_of(tid, rnd.round_no, i) for i in range(len(rnd.tables))
        ]
    # Each entrant played one table in each round.
    assert all(len(tables) == 2 for tables in played.values())
