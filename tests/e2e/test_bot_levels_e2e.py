"""Bot levels through the gateway: a host adds a strong bot, a practice table names its bots'
level, and an unknown level is refused and changes nothing (SQLite and PostgreSQL).

And the ratings that tell levels and people apart (issue 12): four people play a short game
while scoring is killed and restarted, and each round is rated exactly once, as the stored
log says; a practice game counts for history only; dropping scoring's read models and
replaying the stream gives the same rows bit for bit; leaderboards rank with ties and page
with signed tokens; bad questions are refused with a reason and change nothing. (Here, on
this module's stacks, rather than in a module of its own: a stack costs 15 s to start.)"""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime, timedelta

import grpc

from president import codec
from president.client import GatewayClient, play_seat
from president.ratings.skill import NEW, PROVISIONAL_ROUNDS
from president.rules import game as g
from president.rules import round as rnd
from president.rules.levels import BASIC, STRONG, level_of
from president.servicekit.launcher import Stack
from president.servicekit.nats import envelope
from tests.e2e.test_gateway_e2e import GAME_SECONDS
from tests.support.gateway_truth import Store, check_view, expect, table_of_humans
from tests.support.ratings_truth import (
    drop_read_models,
    eventually,
    expected_skills,
    history_with,
    rated,
    ratings_rows,
    scoring_caught_up,
    scoring_url,
)

INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
DENIED = grpc.StatusCode.PERMISSION_DENIED


async def test_a_host_adds_a_strong_bot_and_plays_a_game(
    client: GatewayClient, store: Store
) -> None:
    # A club game is 5, 7 or 10 rounds (rulebook 002): the host ends this one after two.
    await client.create_table(
        "club",
        options={"game_end": "rounds:5"},
        seat_count=4,
        visibility="private",
        display_name="Host",
    )
    strong = await client.add_bot(level="strong")
    basic = await client.add_bot()
    other = await client.add_bot(level="basic")
    view = await client.get_table()
    assert level_of(view.seats[strong].player_id) == STRONG
    assert view.seats[strong].is_bot and view.seats[strong].player_id.startswith("bot:strong:")
    assert {level_of(view.seats[s].player_id) for s in (basic, other)} == {BASIC}
    await client.start()
    log = await asyncio.wait_for(play_seat(client, host_rounds=2), GAME_SECONDS)
    assert log.last_view is not None and log.last_view.phase == "game_over"
    view = await client.get_table()
    # Read after the view: a presence report (the Session closing) may follow the game.
    check_view(view, store.truth(client.table_id), client.player_id)
    strong_plays = [
        event
        for event in store.events(client.table_id)
        if event.type.endswith("CardsPlayed")
        and codec.parse(event.type, event.payload).seat == strong
    ]
    assert strong_plays, "the strong bot made plays of its own"
    # A bot's moves are its level's account's, not its seat's player id.
    assert {event.metadata.get("actor") for event in strong_plays} == {"bot:strong"}


async def test_a_practice_table_names_its_bots_level(client: GatewayClient, store: Store) -> None:
    # Turn-based: rapid bots wait a human-like delay for each move, which a test need not.
    await client.create_table(
        "house",
        options={"bot_level": "strong", "game_end": "rounds:1"},
        visibility="practice",
        display_name="Solo",
    )
    view = await client.get_table()
    assert [level_of(seat.player_id) for seat in view.seats[1:]] == [STRONG] * 3
    assert "bot_level" not in view.options.options  # a level, not a rule of the game
    await client.start()
    log = await asyncio.wait_for(play_seat(client), GAME_SECONDS)
    assert log.last_view is not None and log.last_view.phase == "game_over"


async def test_an_unknown_level_is_refused_and_changes_nothing(
    client: GatewayClient, store: Store
) -> None:
    await client.create_table("club", seat_count=4, visibility="private", display_name="Host")
    before = store.version(client.table_id)
    await expect(client.add_bot(level="grandmaster"), INVALID, "UNKNOWN_BOT_LEVEL")
    assert store.version(client.table_id) == before
    assert not any(seat.occupied for seat in (await client.get_table()).seats[1:])
    solo = client.sibling()
    await expect(
        solo.create_table("club", options={"bot_level": "grandmaster"}, display_name="Solo"),
        INVALID,
        "UNKNOWN_BOT_LEVEL",
    )
    assert not solo.table_id
    await expect(
        solo.create_table(
            "club", options={"bot_level": "strong"}, visibility="public", display_name="Solo"
        ),
        INVALID,
        "INVALID_OPTIONS",
    )


async def test_ratings_history_and_boards_through_the_gateway(
    client: GatewayClient, store: Store, stack: Stack
) -> None:
    humans = await table_of_humans(
        client, "house", humans=4, seats=4, options={"game_end": "rounds:2"}, visibility="private"
    )
    table_id = client.table_id
    await client.start()
    plays = [
        asyncio.create_task(play_seat(human, host_rounds=10 if human is client else None))
        for human in humans
    ]

    def rounds_ended() -> int:
        return sum(1 for e in store.events(table_id) if e.type.endswith(".RoundEnded"))

    deadline = time.monotonic() + GAME_SECONDS
    while rounds_ended() < 1 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.to_thread(stack.stop_one, "scoring", True)  # kill -9 mid-game
    await asyncio.wait_for(asyncio.gather(*plays), GAME_SECONDS)
    await asyncio.to_thread(stack.start_one, "scoring")

    log = [envelope(stored) for stored in store.events(table_id)]
    expected = expected_skills(log)
    accounts = [human.player_id for human in humans]
    assert set(expected) == set(accounts)
    for human in humans:
        rating = await eventually(
            lambda h=human: rated(h, 2), f"{human.player_id}'s two rounds rated"
        )
        want = expected[human.player_id]
        assert (rating.mu, rating.sigma, rating.rounds) == (want.mu, want.sigma, 2)
        assert rating.conservative == want.mu - 3 * want.sigma
        assert rating.provisional and rating.provisional_below == PROVISIONAL_ROUNDS

    # History: the caller's own game as the log has it.
    standings = [codec.decode(e.type, e.payload) for e in log if e.type.endswith("RoundEnded")]
    ended = next(codec.decode(e.type, e.payload) for e in log if e.type.endswith(".GameEnded"))
    assert isinstance(ended, g.GameEnded)
    mine = (await client.history()).history
    assert not (await client.history()).public_summary
    assert len(mine.games) == 1 and mine.total_games == 1
    game = mine.games[0]
    assert (game.table_id, game.game_no, game.preset, game.ranked) == (table_id, 1, "house", True)
    assert sorted(game.others) == sorted(accounts[1:])
    seat = client.seat
    places = [s.standings.index(seat) + 1 for s in standings if isinstance(s, rnd.RoundEnded)]
    assert [(r.round_no, r.place) for r in game.rounds] == [(1, places[0]), (2, places[1])]
    assert game.points == sum(s.points[seat] for s in standings)
    assert game.result == ("won" if seat in ended.winners else "lost")
    assert (game.rating_before.mu, game.rating_before.sigma) == (NEW.mu, NEW.sigma)
    assert game.rating_after.mu == expected[client.player_id].mu
    assert mine.totals.rounds == 2 and sum(mine.totals.places) == 2
    assert mine.totals.average_place == sum(places) / 2
    assert mine.totals.best_streak == (2 if places == [1, 1] else int(1 in places))

    # Another account sees the public summary only; head-to-head as the log says.
    other = humans[1]
    summary = await other.history(client.player_id)
    assert summary.public_summary and not summary.history.games
    assert summary.history.totals == mine.totals
    theirs = [s.standings.index(other.seat) + 1 for s in standings]
    versus = await client.head_to_head(other.player_id)
    assert (versus.games, versus.rounds) == (1, 2)
    assert versus.rounds_ahead == sum(a < b for a, b in zip(places, theirs, strict=True))
    assert versus.rounds_behind == 2 - versus.rounds_ahead
    # Only the two of them may ask (who played with whom is theirs): the opponent may, an
    # outsider is refused in words, whichever way round the pair is named.
    mirrored = await other.head_to_head(other.player_id, client.player_id)
    assert (mirrored.games, mirrored.rounds_ahead) == (1, versus.rounds_ahead)
    outsider = client.sibling()
    await outsider.create_guest("Eve")
    for pair in ((other.player_id, client.player_id), (client.player_id, other.player_id)):
        denied = await expect(outsider.head_to_head(*pair), DENIED, "HEAD_TO_HEAD_NOT_YOURS")
        assert "only to the two players" in denied.message

    # The rating board, this player's place and the players around it.
    board = (await client.leaderboard("house", around=1)).board
    by_account = {entry.account_id: entry for entry in board.entries}
    assert set(accounts) <= set(by_account)
    values = sorted((e.value for e in board.entries), reverse=True)
    assert [e.value for e in board.entries] == values
    for entry in board.entries:
        assert entry.rank == 1 + sum(v > entry.value for v in values)
    assert board.own.account_id == client.player_id
    assert board.own.rank == by_account[client.player_id].rank
    assert client.player_id in [e.account_id for e in board.around] and len(board.around) <= 3

    # Points this week, paged one at a time; a token from a week that has ended is stale.
    now = datetime.now(UTC)
    first = await client.leaderboard("house", "points", "week", page_size=1, as_of=now.isoformat())
    assert len(first.board.entries) == 1 and first.next_page_token
    second = await client.leaderboard(
        "house", "points", "week", page_size=1, page_token=first.next_page_token
    )
    assert second.board.entries[0].position == 1
    assert second.board.entries[0].account_id != first.board.entries[0].account_id
    await expect(
        client.leaderboard(
            "house",
            "points",
            "week",
            page_size=1,
            page_token=first.next_page_token,
            as_of=(now + timedelta(days=7)).isoformat(),
        ),
        INVALID,
        "PAGE_TOKEN_STALE",
    )
    last_year = await client.leaderboard(
        "house", "points", "week", as_of=(now - timedelta(days=365)).isoformat()
    )
    assert last_year.board.total == 0 and not last_year.board.entries

    # A practice game against bots: in the history, not on the boards or in the rating.
    before_boards = ratings_rows(scoring_url(stack))["ratings_points"]
    solo = client.sibling()
    await solo.create_table("house", options={"game_end": "rounds:1"}, display_name="Solo")
    await solo.start()
    await asyncio.wait_for(play_seat(solo), GAME_SECONDS)
    practice = await eventually(lambda: history_with(solo, 1), "the practice game in the history")
    assert not practice.games[0].ranked and not practice.games[0].HasField("rating_after")
    assert not practice.ratings
    assert ratings_rows(scoring_url(stack))["ratings_points"] == before_boards

    # Bad questions: a reason, a sentence, nothing changed. (Once scoring has every stored
    # event: one it fetched before its kill -9 may come back only now.)
    await eventually(lambda: scoring_caught_up(stack), "scoring caught up with the store", 60)
    rows_before = ratings_rows(scoring_url(stack))
    await expect(client.leaderboard("chess"), INVALID, "INVALID_PRESET")
    await expect(client.leaderboard("house", "points", "decade"), INVALID, "INVALID_WINDOW")
    await expect(client.leaderboard("house", "rating", "week"), INVALID, "INVALID_WINDOW")
    await expect(client.leaderboard("house", "elo"), INVALID, "INVALID_BOARD")
    await expect(client.leaderboard("house", as_of="yesterday"), INVALID, "INVALID_TIME")
    forged = first.next_page_token[:-2] + ("AA" if first.next_page_token[-2:] != "AA" else "BB")
    await expect(
        client.leaderboard("house", "points", "week", page_size=1, page_token=forged),
        INVALID,
        "PAGE_TOKEN_INVALID",
    )
    await expect(
        client.leaderboard(
            "house", "points", "month", page_size=1, page_token=first.next_page_token
        ),
        INVALID,
        "PAGE_TOKEN_INVALID",
    )
    await expect(client.ratings(preset="chess"), INVALID, "INVALID_PRESET")
    nobody = f"nobody-{uuid.uuid4().hex[:8]}"
    await expect(client.ratings(nobody), NOT_FOUND, "ACCOUNT_NOT_FOUND")
    await expect(client.history(nobody), NOT_FOUND, "ACCOUNT_NOT_FOUND")
    await expect(client.head_to_head(nobody), NOT_FOUND, "ACCOUNT_NOT_FOUND")
    await expect(client.head_to_head(client.player_id), INVALID, "SAME_ACCOUNT")
    assert ratings_rows(scoring_url(stack)) == rows_before

    # Drop scoring's read models and replay the stream on a new durable: bit for bit.
    await asyncio.to_thread(stack.stop_one, "scoring")
    drop_read_models(scoring_url(stack))
    env = stack.base_env()
    env["PRESIDENT_SCORING_DURABLE"] = f"scoring-rebuild-{uuid.uuid4().hex[:8]}"
    await asyncio.to_thread(stack.start_one, "scoring", env)
    await eventually(lambda: history_with(solo, 1), "the rebuild", 60)
    await eventually(lambda: rated(client, 2), "the rebuilt ratings", 60)
    assert ratings_rows(scoring_url(stack)) == rows_before
    await solo.close()
