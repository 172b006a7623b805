"""Seats and hosts through the gateway, on SQLite and PostgreSQL, with two gateway replicas.

Rights are read from the table's state by the table service: the host who
left and the removed player are refused on every replica at once, the host
role passes on (by handover, or to the next person when the host leaves), a
newcomer between rounds starts like round 1, and bad input to seats and
options is refused with a status, a stable reason and a sentence, changing
nothing. Chat at the table: refusals with their reasons, the host's mute, the
rate limit, spectators who read but may not write, and streams that carry the
messages and no hidden card.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from datetime import datetime, timedelta

import grpc
import pytest

from president import codec
from president.client import GatewayClient, play_seat
from president.events.v1 import events_pb2 as epb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.input_rules import CHAT_MAX
from president.hosting.seat_rates import CHAT
from president.servicekit.launcher import Stack
from tests.support.gateway_truth import Store, check_stream, expect, table_of_humans
from tests.support.replicas import second_gateway as another_gateway

DENIED = grpc.StatusCode.PERMISSION_DENIED
FAILED = grpc.StatusCode.FAILED_PRECONDITION
INVALID = grpc.StatusCode.INVALID_ARGUMENT
ROUND_SECONDS = 60


@pytest.fixture(scope="module")
def replicas() -> Iterator[tuple[ExitStack, dict[str, str]]]:
    """A second gateway process per stack (by database), stopped at the module's end."""
    with ExitStack() as running:
        yield running, {}


@pytest.fixture
def second_gateway(stack: Stack, replicas: tuple[ExitStack, dict[str, str]]) -> str:
    """The address of another gateway replica of the stack (same secret, same services)."""
    running, started = replicas
    if stack.database_url not in started:
        started[stack.database_url] = running.enter_context(another_gateway(stack))
    return started[stack.database_url]


@pytest.fixture
async def client(stack: Stack, store: Store) -> AsyncIterator[GatewayClient]:
    """The host's client on the first gateway; afterwards its table verifies."""
    made = GatewayClient.connect(stack.gateway)
    yield made
    await made.close()
    if made.table_id:
        store.verify([made.table_id])


def on(address: str, player: GatewayClient) -> GatewayClient:
    """The same player (the same token) as a client of another gateway replica."""
    return GatewayClient.connect(
        address,
        token=player.token,
        table_id=player.table_id,
        seat=player.seat,
        player_id=player.player_id,
    )


async def finish_round(players: list[GatewayClient]) -> None:
    """The players play their seats until the round is over (no one acts as the host)."""
    await asyncio.wait_for(
        asyncio.gather(
            *(
                play_seat(player, until=lambda view: view.phase == "between_rounds", keep=False)
                for player in players
            )
        ),
        ROUND_SECONDS,
    )


async def test_the_host_who_left_is_refused_everywhere_and_the_next_person_hosts(
    client: GatewayClient, second_gateway: str
) -> None:
    ann, bob, cid = await table_of_humans(
        client, "classic", humans=3, seats=4, options={"game_end": "rounds:5"}
    )
    await ann.start()
    await ann.leave()  # mid-round: a bot finishes it for her
    ann_b = on(second_gateway, ann)
    try:
        for gateway in (ann, ann_b):
            before = (await bob.get_table()).version
            await expect(gateway.host_action("next_round"), DENIED, "SEAT_LEFT")
            await expect(gateway.add_bot(seat=1), DENIED, "SEAT_LEFT")
            await expect(gateway.remove_seat(bob.seat), DENIED, "SEAT_LEFT")
            await expect(gateway.hand_over_host(cid.seat), DENIED, "SEAT_LEFT")
            await expect(gateway.react("thumbs_up"), DENIED, "SEAT_LEFT")
            assert (await bob.get_table()).version == before  # nothing changed
        view = await bob.get_table()
        assert view.host_player_id == bob.player_id  # the next person in seat order
        await finish_round([bob, cid])
        cid_b = on(second_gateway, cid)
        try:
            refusal = await expect(cid_b.host_action("next_round"), DENIED, "NOT_HOST")
            assert "(Player 1)" in refusal.message
            # Bob hands the role to Cid: at once, Cid is the host on the other replica.
            await bob.hand_over_host(cid.seat)
            await expect(bob.host_action("next_round"), DENIED, "NOT_HOST")
            await cid_b.host_action("next_round")
        finally:
            await cid_b.close()
        assert (await bob.get_table()).host_player_id == cid.player_id
    finally:
        await ann_b.close()


async def test_a_removed_player_is_told_who_removed_them_on_every_replica(
    client: GatewayClient, second_gateway: str
) -> None:
    ann, bob = await table_of_humans(
        client, "classic", humans=2, seats=4, options={"game_end": "rounds:5"}
    )
    await ann.start()
    await expect(ann.remove_seat(ann.seat or 0), FAILED, "OWN_SEAT")  # the host leaves instead
    await expect(bob.remove_seat(ann.seat or 0), DENIED, "NOT_HOST")
    await ann.remove_seat(bob.seat or 0)
    bob_b = on(second_gateway, bob)
    try:
        for gateway in (bob, bob_b):
            before = (await ann.get_table()).version
            refused = await expect(gateway.react("thumbs_up"), DENIED, "SEAT_REMOVED")
            assert "Host (the host) removed you" in refused.message
            await expect(gateway.pass_(), DENIED, "SEAT_REMOVED")
            await expect(gateway.leave(), DENIED, "SEAT_REMOVED")
            assert (await ann.get_table()).version == before
    finally:
        await bob_b.close()


async def test_host_handover_refuses_a_bot_a_missing_seat_and_a_non_host(
    client: GatewayClient,
) -> None:
    ann, bob = await table_of_humans(client, "classic", humans=2, seats=4)
    before = (await ann.get_table()).version
    await expect(ann.hand_over_host(2), FAILED, "HOST_MUST_BE_HUMAN")
    await expect(ann.hand_over_host(ann.seat or 0), FAILED, "ALREADY_HOST")
    await expect(ann.hand_over_host(9), INVALID, "NO_SUCH_SEAT")
    await expect(bob.hand_over_host(bob.seat or 0), DENIED, "NOT_HOST")
    view = await ann.get_table()
    assert view.version == before and view.host_player_id == ann.player_id


async def test_a_newcomer_between_rounds_has_no_role_no_score_and_no_exchange(
    client: GatewayClient,
) -> None:
    ann, bob = await table_of_humans(
        client, "classic", humans=2, seats=4, options={"game_end": "rounds:5"}
    )
    await ann.start()
    await finish_round([ann, bob])
    left = await ann.get_table()
    assert left.phase == "between_rounds" and left.seats[bob.seat or 0].role
    await bob.leave()
    newcomer = client.sibling()
    await newcomer.join(ann.table_id or "", "Newbie", seat=bob.seat)
    mine = await newcomer.get_table()
    seat = mine.seats[bob.seat or 0]
    assert (seat.display_name, seat.score, seat.role, seat.card_count) == ("Newbie", 0, "", 0)
    assert list(mine.round.hand) == [] and list(mine.round.legal) == []
    snapshot = await anext(aiter(newcomer.watch()))
    assert list(snapshot.view.round.hand) == []
    assert snapshot.view.seats[bob.seat or 0].role == ""
    assert (await ann.get_table()).seats[bob.seat or 0].role == ""
    await ann.host_action("next_round")
    for _ in range(100):
        view = await newcomer.get_table()
        if view.phase == "round" and view.round.round_no == 2:
            break
        await asyncio.sleep(0.05)
    assert view.round.round_no == 2 and view.round.phase != "exchange"  # like round 1
    assert view.round.return_owed == 0 and len(view.round.hand) > 0


async def test_a_leaver_cannot_take_a_seat_back_until_the_game_ends(
    client: GatewayClient, store: Store
) -> None:
    """Rulebook 000: "you cannot reclaim that seat during the game": the same account
    joining again (any seat) is refused and changes nothing; after the game it may sit again."""
    ann, bob = await table_of_humans(
        client, "classic", humans=2, seats=4, options={"game_end": "rounds:5"}
    )
    await ann.start()
    await finish_round([ann, bob])
    seat = bob.seat or 0
    await bob.leave()
    table_id = ann.table_id or ""
    before = store.moved(table_id)
    await expect(bob.join(table_id, "Bob again", seat=seat), DENIED, "LEFT_THIS_GAME")
    await expect(bob.join(table_id, "Bob again"), DENIED, "LEFT_THIS_GAME")
    assert store.moved(table_id) == before
    assert not (await ann.get_table()).seats[seat].occupied
    await ann.host_action("end_game")
    await ann.host_action("back_to_lobby")
    joined = await bob.join(table_id, "Bob again", seat=seat)  # a new game: welcome back
    assert joined.seat == seat


async def test_options_a_rulebook_contradicts_are_refused(client: GatewayClient) -> None:
    for preset, options, visibility, words in (
        ("club", {"game_end": "rounds:6"}, "private", "a club game is 5, 7 or 10 rounds"),
        ("club", {"game_end": "rounds:5"}, "public", "5 or 10 rounds are a host's choice"),
        ("club", {"players": "3..7"}, "private", "club is played by 4 to 7 players"),
        ("house", {"equal_rank": "false"}, "public", "equal_rank cannot be switched off"),
    ):
        refused = await expect(
            client.create_table(preset, options=options, visibility=visibility),
            INVALID,
            "INVALID_OPTIONS",
        )
        assert words in refused.message, refused
    seats = await expect(
        client.create_table("club", seat_count=3, visibility="public"),
        INVALID,
        "INVALID_SEAT_COUNT",
    )
    assert "4 to 7 seats" in seats.message
    one = await expect(
        client.create_table("classic", options={"players": "4..4"}, seat_count=5),
        INVALID,
        "INVALID_SEAT_COUNT",
    )
    assert "exactly 4 seats" in one.message and "4 to 4" not in one.message
    await client.create_table("club", options={"game_end": "rounds:10"}, visibility="private")


async def test_starting_with_too_few_players_is_its_own_refusal(client: GatewayClient) -> None:
    await client.create_table("classic", visibility="public", display_name="Host")
    before = (await client.get_table()).version
    refused = await expect(client.start(), FAILED, "NOT_ENOUGH_PLAYERS")
    assert "not 1" in refused.message
    assert (await client.get_table()).version == before


async def test_rapid_plays_and_passes_name_their_trick_version(client: GatewayClient) -> None:
    players = await table_of_humans(client, "house-rapid", humans=3, seats=3)
    await client.start()
    view = await client.get_table()
    for _ in range(100):
        if view.phase == "round" and list(view.round.legal):
            break
        await asyncio.sleep(0.05)
        view = await client.get_table()
    card = next(action for action in view.round.legal if action.verb == "play").cards
    await expect(client.play(list(card)), INVALID, "TRICK_VERSION_REQUIRED")
    await expect(players[1].pass_(), INVALID, "TRICK_VERSION_REQUIRED")
    assert (await client.get_table()).version == view.version
    await client.play(list(card), trick_version=view.round.trick_version)


async def test_a_command_id_sent_again_with_other_cards_is_a_conflicting_retry(
    client: GatewayClient,
) -> None:
    players = await table_of_humans(client, "classic", humans=4, seats=4)
    await client.start()
    for _ in range(100):
        views = [await player.get_table() for player in players]
        turn = next((i for i, v in enumerate(views) if v.round.legal and v.phase == "round"), None)
        if turn is not None:
            break
        await asyncio.sleep(0.05)
    assert turn is not None
    player, view = players[turn], views[turn]
    play = next(action for action in view.round.legal if action.verb == "play")
    version = await player.play(list(play.cards), command_id="mine-1")
    assert await player.play(list(play.cards), command_id="mine-1") == version  # a retry
    other = next(card for card in view.round.hand if card not in play.cards)
    refused = await expect(player.play([other], command_id="mine-1"), INVALID, "COMMAND_ID_REUSED")
    assert "another command" in refused.message
    assert other in (await player.get_table()).round.hand  # the refused play changed nothing


async def test_reactions_are_rate_limited_per_seat(client: GatewayClient) -> None:
    ann, bob = await table_of_humans(client, "classic", humans=2, seats=4)
    for _ in range(5):
        await ann.react("thumbs_up")
    before = (await ann.get_table()).version
    refused = await expect(
        ann.react("thumbs_up"), grpc.StatusCode.RESOURCE_EXHAUSTED, "REACTION_RATE"
    )
    assert "at most 5 reactions" in refused.message
    assert (await ann.get_table()).version == before
    await bob.react("wave")  # another seat reacts


#: What the chat test writes and sees, in order.
SAID = ["hello ♥", "gg", "nice one", "muted now?", "unmuted"]


async def chats(stream: AsyncIterator[pb.WatchResponse], out: list[pb.WatchResponse]) -> None:
    """Keep every change of ``stream`` until it has shown all of :data:`SAID`."""
    seen = 0
    async for change in stream:
        out.append(change)
        seen += change.event.type.endswith(".ChatPosted")
        if seen == len(SAID):
            return


async def test_chat_mute_rate_and_spectators_through_the_gateway(
    client: GatewayClient, store: Store
) -> None:
    host, ann, bob = await table_of_humans(client, "classic", humans=3, seats=4)
    await host.start()
    table_id = host.table_id
    assert table_id is not None
    spectator = client.sibling()
    await spectator.spectate(table_id)
    start = store.version(table_id)
    watched: list[pb.WatchResponse] = []
    seen_by_bob: list[pb.WatchResponse] = []
    watching = asyncio.gather(
        chats(spectator.watch(start), watched), chats(bob.watch(start), seen_by_bob)
    )

    await ann.send_chat("  hello ♥  ")  # kept normalised and trimmed
    await bob.send_chat("gg")
    refused = await expect(spectator.send_chat("me too"), DENIED, "READ_ONLY")
    assert "no seat" in refused.message
    await expect(ann.send_chat("x" * (CHAT_MAX + 1)), INVALID, "INVALID_CHAT")
    await expect(ann.send_chat("hi\u202eereh"), INVALID, "INVALID_CHAT")
    await expect(ann.mute_seat(bob.seat or 0), DENIED, "NOT_HOST")
    await expect(host.mute_seat(3), FAILED, "CANNOT_MUTE")  # the bot's seat
    await expect(host.mute_seat(host.seat or 0), FAILED, "CANNOT_MUTE")  # the host's own

    await ann.send_chat("nice one")
    await host.mute_seat(bob.seat or 0)
    assert (await host.get_table()).seats[bob.seat or 0].muted
    before = store.moved(table_id)
    muted = await expect(bob.send_chat("muted now?"), DENIED, "SEAT_MUTED")
    assert "the host muted you" in muted.message
    assert store.moved(table_id) == before  # refused: nothing stored
    await host.mute_seat(bob.seat or 0, muted=False)
    await bob.send_chat("muted now?")
    await host.send_chat("unmuted")

    for _ in range(CHAT.burst - 2):  # ann wrote two; the window allows CHAT.burst
        await ann.send_chat("spam")
    before = store.moved(table_id)
    rate = await expect(ann.send_chat("one more"), grpc.StatusCode.RESOURCE_EXHAUSTED, "CHAT_RATE")
    assert f"at most {CHAT.burst} chat messages" in rate.message
    assert store.moved(table_id) == before
    await bob.send_chat("another seat writes")

    await asyncio.wait_for(watching, 20)
    truth = store.truth(table_id)
    for player_id, stream in ((None, watched), (bob.player_id, seen_by_bob)):
        check_stream(stream, truth, player_id, start)  # no other seat's card, no early secret
        posted = [
            codec.parse(change.event.type, change.event.payload)
            for change in stream
            if change.event.type.endswith(".ChatPosted")
        ]
        assert [m.text for m in posted if isinstance(m, epb.ChatPosted)] == SAID
        # the message is the seat and its text, nothing added by the server
        assert all(m.ListFields()[-1][0].name == "text" for m in posted)
    assert not any(change.view.round.hand for change in watched)


async def test_get_scores_right_after_a_game_includes_it_and_the_lobby_has_no_current_totals(
    client: GatewayClient,
) -> None:
    ann, bob = await table_of_humans(
        client, "classic", humans=2, seats=4, options={"game_end": "rounds:1"}
    )
    await ann.start()
    await asyncio.wait_for(
        asyncio.gather(*(play_seat(p, keep=False) for p in (ann, bob))), ROUND_SECONDS
    )
    scores = await bob.get_scores()  # at once: scoring may still be a step behind the table
    assert [game.game_no for game in scores.games] == [1]
    assert sum(scores.games[0].totals) > 0 and scores.rounds_played == 1
    assert any(seat.total for seat in scores.scores)
    await ann.host_action("back_to_lobby")
    in_lobby = await bob.get_scores()
    assert [game.game_no for game in in_lobby.games] == [1]  # the old game, as finished
    assert all(seat.total == 0 for seat in in_lobby.scores) and in_lobby.rounds_played == 0


async def test_rapid_bots_wait_a_human_like_delay_so_a_person_can_win_the_race(
    client: GatewayClient, store: Store
) -> None:
    (ann,) = await table_of_humans(client, "house-rapid", humans=1, seats=3)
    await ann.start()
    for _ in range(100):
        view = await ann.get_table()
        if view.phase == "round" and view.round.phase == "play":
            break
        await asyncio.sleep(0.02)
    play = next(action for action in view.round.legal if action.verb == "play")
    await ann.play(list(play.cards), trick_version=view.round.trick_version)  # first: hers
    for _ in range(200):
        events = store.events(ann.table_id or "")
        bots = [e for e in events if e.metadata.get("actor", "").startswith("bot:")]
        if bots:
            break
        await asyncio.sleep(0.05)
    assert bots, "no bot moved"
    mine = next(e for e in events if e.metadata.get("actor") == ann.player_id)
    waited = datetime.fromisoformat(bots[0].metadata["time"]) - datetime.fromisoformat(
        mine.metadata["time"]
    )
    assert waited >= timedelta(milliseconds=1200)  # the table's bot_delay_ms, by its own clock
