"""Bot levels through the gateway: a host adds a strong bot, a practice table names its bots'
level, and an unknown level is refused and changes nothing (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio

import grpc

from president import codec
from president.client import GatewayClient, play_seat
from president.rules.levels import BASIC, STRONG, level_of
from tests.e2e.test_gateway_e2e import GAME_SECONDS
from tests.support.gateway_truth import Store, check_view, expect

INVALID = grpc.StatusCode.INVALID_ARGUMENT


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
