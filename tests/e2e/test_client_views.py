"""End to end through the gateway: what a client needs in every view (issue 11).

Stale choices refused, the play button's words (PreviewPlay) agreeing with
the engine for every selection a property test finds, the countdown the
server acts on, the exchange's to whom, on SQLite and PostgreSQL, the
services as processes. The truth is the stored log. (The activity and the
lobby: ``test_client_history``.)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import datetime

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from president.client import GatewayClient, GatewayError, choose
from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.hosting.countdown import unix_ms
from president.rules import game as g
from president.rules import round as rnd
from president.rules.button import play_label
from president.rules.cards import card_name, mask_of, parse_cards
from president.rules.combos import classify
from president.rules.errors import Rejected
from president.rules.options import PRESETS
from president.servicekit.launcher import Stack
from tests.e2e import test_gateway_e2e as gateway_e2e
from tests.support.gateway_truth import Store, expect, table_of_humans

#: The gateway tests' fixtures: a client whose tables verify afterwards, the stack's store.
client, store, stores = gateway_e2e.client, gateway_e2e.store, gateway_e2e.stores

ABORTED = grpc.StatusCode.ABORTED
#: A selection, in a shape that never depends on the table (so hypothesis can replay and
#: shrink it): either picks, each a card of the hand (by position) or any card (held or not,
#: by index); or one rank of the hand (by a card's position) and how many of it.
Picks = list[tuple[bool, int]] | tuple[int, int]
PICKS: st.SearchStrategy[Picks] = st.one_of(
    st.lists(st.tuples(st.integers(0, 3).map(bool), st.integers(0, 51)), min_size=1, max_size=5),
    st.tuples(st.integers(0, 51), st.integers(1, 4)),
)


def _selection(picks: Picks, hand: list[str]) -> list[str]:
    if isinstance(picks, tuple):
        position, count = picks
        if not hand:
            return [card_name(position)]
        rank = hand[position % len(hand)][:-1]
        return [card for card in hand if card[:-1] == rank][:count]
    return [hand[index % len(hand)] if held and hand else card_name(index) for held, index in picks]


async def _my_turn(player: GatewayClient, tries: int = 400) -> gpb.TableView:
    """The player's view once it is their turn to play (the bots move by themselves)."""
    for _ in range(tries):
        view = await player.get_table()
        if view.round.phase == "play" and view.round.to_act == player.seat:
            return view
        await asyncio.sleep(0.05)
    raise AssertionError("the turn never came")


async def _moving_on(player: GatewayClient) -> gpb.TableView:
    """The player's view, the table moved on to their next turn where it waits for them
    (the next round between rounds, their return in the exchange)."""
    for _ in range(400):
        view = await player.get_table()
        if view.phase == "between_rounds":
            await player.host_action("next_round", expected_version=view.version)
        elif view.round.phase == "exchange" and view.round.return_owed:
            owed = view.round.return_owed
            await player.return_cards(view.round.hand[:owed], expected_version=view.version)
        elif view.phase != "round" or (
            view.round.phase == "play" and (view.round.to_act == player.seat or not view.round.hand)
        ):
            return view
        await asyncio.sleep(0.05)
    raise AssertionError("the table did not move on")


# --------------------------------------------------------------------------- stale choices
async def test_a_command_chosen_on_an_older_version_is_stale_and_changes_nothing(
    client: GatewayClient, store: Store
) -> None:
    """Calls and Session commands naming an older version: ABORTED STALE, a sentence, no change."""
    await client.create_table("house", display_name="Ada")
    await client.start()
    view = await _my_turn(client)
    table_id = client.table_id
    before = store.moved(table_id)
    assert view.version == before
    older = view.version - 1
    card = sorted(view.round.hand)[0]
    refusal = await expect(client.play([card], expected_version=older), ABORTED, "STALE")
    assert f"version {older}" in refusal.message and f"version {before}" in refusal.message
    await expect(client.pass_(expected_version=older), ABORTED, "STALE")
    await expect(client.react("thumbs_up", expected_version=older), ABORTED, "STALE")
    await expect(client.host_action("end_game", expected_version=older), ABORTED, "STALE")
    async with client.session(before) as session:
        await expect(session.pass_(expected_version=older), ABORTED, "STALE")
    assert store.moved(table_id) == before, "a stale command changed the table"
    # Chosen on the table's newest version: it runs.
    action = choose(view)
    assert action is not None
    verb, cards = action
    if verb == "play":
        assert await client.play(cards, expected_version=before) > before
    else:
        assert await client.pass_(expected_version=before) > before


# --------------------------------------------------------------------------- the play button
def _engine_on(store: Store, table_id: str, version: int, seat: int, cards: list[str]) -> object:
    """What the engine decides on the stored table at ``version``: None or the Rejected."""
    table = store.truth(table_id).tables[version]
    state = table.game.round
    indexes = parse_cards(cards)
    if len(set(indexes)) != len(indexes):
        return "twice"
    try:
        g.decide(
            table.game, rnd.PlayCards(seat, mask_of(cards), state.trick_version if state else None)
        )
    except Rejected as refusal:
        return refusal
    return None


@pytest.mark.parametrize("preset", ["club", "house"])
def test_the_preview_agrees_with_the_engine_for_every_selection(
    preset: str, stack: Stack, store: Store
) -> None:
    """For every selection hypothesis finds (held or not, repeated cards, any count): the
    preview is playable iff the engine accepts the play on the gateway's table version; a
    playable one says the button's words and then plays; a refused one carries the very
    status, reason and sentence the Play itself gets, and changes nothing."""
    host = asyncio.run(_practice_table(stack, preset))

    @settings(
        max_examples=60,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(picks=PICKS)
    def check(picks: Picks) -> None:
        asyncio.run(_check_one_selection(stack, store, host, picks))

    check()
    store.verify([host[0]])


async def _practice_table(stack: Stack, preset: str) -> tuple[str, str, str, int]:
    async with GatewayClient.connect(stack.gateway) as player:
        await player.create_table(preset, display_name="Ada")
        await player.start()
        assert player.seat is not None
        return player.table_id, player.token, player.player_id, player.seat


async def _check_one_selection(
    stack: Stack, store: Store, host: tuple[str, str, str, int], picks: Picks
) -> None:
    table_id, token, _player_id, seat = host
    async with GatewayClient.connect(
        stack.gateway, token=token, table_id=table_id, seat=seat
    ) as player:
        view = await _moving_on(player)
        hand = list(view.round.hand)
        chosen = _selection(picks, hand)
        preview = await player.preview_play(chosen)
        engine = _engine_on(store, table_id, preview.version, seat, chosen)
        assert preview.playable == (engine is None), (chosen, preview, engine)
        if isinstance(engine, Rejected):
            assert (preview.refused.reason, preview.refused.message) == (
                engine.code.value,
                engine.reason,
            )
        before = store.moved(table_id)
        if preview.playable:
            state = store.truth(table_id).tables[preview.version].game.round
            assert state is not None
            mask = mask_of(chosen)
            kind = classify(mask, state.options, state.revolution).kind
            assert preview.label == play_label(mask, state.must_include & mask, kind)
            assert preview.label.startswith("Play ") and not preview.HasField("refused")
            await player.play(chosen, expected_version=preview.version)  # the button, pressed
            return
        assert not preview.label
        try:
            await player.play(chosen, expected_version=preview.version)
        except Exception as error:
            reason = getattr(error, "reason", None)
            if reason == "STALE" and preview.refused.reason != "STALE":
                return  # the table moved on between the preview and the play: nothing to compare
            assert (error.code.name, reason, error.message) == (  # type: ignore[attr-defined]
                preview.refused.code,
                preview.refused.reason,
                preview.refused.message,
            )
        else:
            raise AssertionError(f"{chosen}: the preview refused what the table accepted")
        assert store.moved(table_id) == before, "a refused play changed the table"
        await _some_legal_move(player, view, len(chosen))  # the game goes on: other states


async def _some_legal_move(player: GatewayClient, view: gpb.TableView, pick: int) -> None:
    """One of the view's legal moves (a stale one is dropped: the table moved on anyway)."""
    legal = [action for action in view.round.legal if action.verb in ("play", "pass")]
    if not legal:
        return
    action = legal[pick % len(legal)]
    with contextlib.suppress(GatewayError):
        if action.verb == "play":
            await player.play(list(action.cards), expected_version=view.version)
        else:
            await player.pass_(expected_version=view.version)


async def test_the_button_names_the_first_leads_three_of_clubs(client: GatewayClient) -> None:
    """Club's first lead must include the 3 of clubs: the button says so, others are refused."""
    await client.create_table("club", options={"first_lead_must_include": "true"})
    await client.start()
    view = await _my_turn(client)
    hand = list(view.round.hand)
    if "3C" in hand:
        threes = [card for card in hand if card.startswith("3")]
        preview = await client.preview_play(threes)
        rest = len(threes) - 1
        words = {0: "", 1: " and a 3", 2: " and two 3s", 3: " and three 3s"}[rest]
        assert preview.playable and preview.label == f"Play the 3 of clubs{words}"
        other = next(card for card in hand if not card.startswith("3"))
        refused = await client.preview_play([other])
        assert not refused.playable and refused.refused.reason == "MUST_INCLUDE"
        assert "3 of clubs" in refused.refused.message or "3C" in refused.refused.message
    else:  # someone else led: a single of ours says "Play a ..." or why not
        preview = await client.preview_play(hand[-1:])
        assert preview.playable or preview.refused.reason


async def test_a_preview_needs_a_seat_and_well_formed_cards(client: GatewayClient) -> None:
    await client.create_table("house", display_name="Ada")
    await expect(client.preview_play([]), grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_CARDS")
    await expect(client.preview_play(["11H"]), grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_CARDS")
    in_lobby = await client.preview_play(["3C"])
    assert not in_lobby.playable and in_lobby.refused.reason == "WRONG_PHASE"
    watcher = client.sibling()
    await watcher.spectate(client.table_id)
    await expect(watcher.preview_play(["3C"]), grpc.StatusCode.PERMISSION_DENIED, "READ_ONLY")


# --------------------------------------------------------------------------- time
def _stored_ms(store: Store, table_id: str, version: int) -> int:
    stored = next(e for e in store.events(table_id) if e.version == version)
    return unix_ms(datetime.fromisoformat(stored.time))


async def test_every_view_carries_the_deadline_the_server_then_acts_on(
    client: GatewayClient, store: Store
) -> None:
    """GetTable, the Watch snapshot and the Session snapshot show the turn's deadline and the
    server's now; nobody plays, and the server's TimedOut is stored at that deadline."""
    await client.create_table("house", options={"turn_seconds": "3"}, display_name="Idle")
    lobby = await client.get_table()
    assert not lobby.HasField("deadline_unix_ms") and lobby.server_now_unix_ms > 0
    assert not lobby.deadline_kind
    await client.start()
    view = await _my_turn(client)
    assert (view.deadline_kind, view.deadline_seat) == ("turn", client.seat)
    left = view.deadline_unix_ms - view.server_now_unix_ms
    assert 0 < left <= 3000, left
    async for change in client.watch():
        snapshot = change.view
        break
    async with client.session() as session:
        async for change in session.changes():
            session_view = change.view
            break
    for shown in (snapshot, session_view):
        if shown.version == view.version:
            assert shown.deadline_unix_ms == view.deadline_unix_ms
            assert shown.server_now_unix_ms >= view.server_now_unix_ms
    table_id = client.table_id
    for _ in range(200):
        timed = [
            e.version
            for e in store.events(table_id)
            if e.version > view.version and e.type.endswith("TimedOut")
        ]
        if timed:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the timer never acted")
    acted_ms = _stored_ms(store, table_id, timed[0])
    # The timer fires at the deadline, and the table commits its move right after.
    assert -100 <= acted_ms - view.deadline_unix_ms <= 2500, acted_ms - view.deadline_unix_ms


async def test_rapid_views_show_the_shared_timer(client: GatewayClient) -> None:
    await client.create_table("house-rapid", display_name="Quick")
    await client.start()
    for _ in range(200):
        view = await client.get_table()
        if view.round.phase == "play":
            break
        await asyncio.sleep(0.05)
    assert view.deadline_kind == "rapid" and not view.HasField("deadline_seat")
    assert 0 < view.deadline_unix_ms - view.server_now_unix_ms <= 10_000


# --------------------------------------------------------------------------- the exchange
async def drive_until(
    humans: list[GatewayClient], done: Callable[[list[gpb.TableView]], bool]
) -> list[gpb.TableView]:
    """Every human plays simple legal moves (the host deals the next round) until ``done``
    holds for their views; returns those views."""
    for _ in range(2000):
        views = [await human.get_table() for human in humans]
        if done(views):
            return views
        for human, view in zip(humans, views, strict=True):
            if view.phase == "between_rounds" and human is humans[0]:
                with contextlib.suppress(GatewayError):
                    await human.host_action("next_round", expected_version=view.version)
            action = choose(view) if view.round.phase == "play" else None
            # Rapid play names the trick a move answers (TRICK_VERSION_REQUIRED without it).
            trick = view.round.trick_version
            with contextlib.suppress(GatewayError):
                if action is not None and action[0] == "play":
                    await human.play(action[1], trick, expected_version=view.version)
                elif action is not None:
                    await human.pass_(trick, expected_version=view.version)
    raise AssertionError("the table never got there")


def _gifts(store: Store, table_id: str, after: int) -> list[epb.CardsGiven]:
    return [
        epb.CardsGiven.FromString(e.payload)
        for e in store.events(table_id)
        if e.version > after and e.type.endswith("CardsGiven")
    ]


@pytest.mark.parametrize("preset", PRESETS)
async def test_the_exchange_says_to_whom_and_received_cards_stay_new_until_played(
    preset: str, client: GatewayClient, store: Store
) -> None:
    # A club game at a public table is 7 rounds (rulebook 002); this test needs three.
    game_end = "rounds:7" if preset == "club" else "rounds:3"
    humans = await table_of_humans(
        client, preset, humans=4, seats=4, options={"game_end": game_end}
    )
    table_id = client.table_id
    await client.start()
    views = await drive_until(
        humans, lambda views: all(v.round.round_no == 2 and v.phase == "round" for v in views)
    )
    start = min(v.version for v in views)
    round_two = max(e.version for e in store.events(table_id) if e.type.endswith("RoundStarted"))
    if views[0].round.phase != "exchange":
        assert not _gifts(store, table_id, round_two), "an exchange was not shown"
        return  # this preset exchanges nothing
    views = [await human.get_table() for human in humans]
    # One deadline for the whole exchange, the same in every view.
    assert {(v.deadline_kind, v.deadline_unix_ms) for v in views} == {
        ("exchange", views[0].deadline_unix_ms)
    }
    assert not any(v.HasField("deadline_seat") for v in views)
    gifts = _gifts(store, table_id, round_two)
    assert gifts and all(gift.automatic for gift in gifts) and start >= round_two
    for human, view in zip(humans, views, strict=True):
        mine = [gift for gift in gifts if gift.receiver == human.seat]
        if view.round.return_owed:
            (gift,) = mine
            assert view.round.return_to == gift.giver
            assert view.round.return_owed == len(gift.cards)
        else:
            assert not view.round.HasField("return_to")
        received = {card for gift in mine for card in gift.cards}
        assert received == set(view.round.new_cards), (human.seat, view.round.new_cards)
    for human, view in zip(humans, views, strict=True):  # the returns
        if view.round.return_owed:
            returned = sorted(view.round.hand)[: view.round.return_owed]
            await human.return_cards(returned, expected_version=None)
    views = await drive_until(humans, lambda views: views[0].round.phase != "exchange")
    gifts = _gifts(store, table_id, round_two)

    def played_by(seat: int | None, version: int) -> bool:
        return any(
            e.type.endswith("CardsPlayed") and epb.CardsPlayed.FromString(e.payload).seat == seat
            for e in store.events(table_id)
            if round_two < e.version <= version
        )

    gifts = _gifts(store, table_id, round_two)
    for human, view in zip(humans, views, strict=True):
        held = set(view.round.hand)
        received = {c for gift in gifts if gift.receiver == human.seat for c in gift.cards}
        played = played_by(human.seat, view.version)
        assert set(view.round.new_cards) == (set() if played else received & held)
        assert received & held or not view.round.new_cards
        assert not view.round.HasField("return_to")
    # Once each has played in this round, nothing of theirs is marked new.
    views = await drive_until(
        humans,
        lambda views: all(
            v.round.round_no != 2 or played_by(h.seat, v.version)
            for h, v in zip(humans, views, strict=True)
        ),
    )
    assert not any(v.round.new_cards for v in views if v.round.round_no == 2)
