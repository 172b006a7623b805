"""The strong bot: what it knows (nothing hidden), the deals it imagines, its moves and budget."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from president.rules import bots, search
from president.rules import round as rnd
from president.rules.cards import FULL_DECK, JOKERS, cards_of, mask_of, parse_card
from president.rules.information import InformationSet, information_set, sample_world
from president.rules.levels import (
    BASIC,
    STRONG,
    UnknownBotLevel,
    bot_account,
    bot_player_id,
    check_bot_player_id,
    check_level,
    level_of,
)
from president.rules.options import PRESETS, options_for
from president.rules.search import Budget, candidate_moves, choose_strong
from tests.support.rules_strategies import option_mixes, random_command, start

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SMALL = Budget(simulations=40)


def _unseen_holders(state: rnd.RoundState, seat: int) -> list[int]:
    return [s for s in range(state.seat_count) if s != seat and state.hands[s]]


def _seat_knowledge(state: rnd.RoundState, seat: int) -> tuple[dict[int, int], dict[int, int]]:
    """What the seat knows by the rules, worked out here on its own (not by the code under
    test): cards it gave that their receiver still holds, and the ceiling under which the
    giver of its automatic gift holds every card it kept."""
    fixed: dict[int, int] = {}
    ceilings: dict[int, int] = {}
    for give in state.exchanged:
        if give.giver == seat:
            fixed[give.receiver] = fixed.get(give.receiver, 0) | give.cards
        elif give.receiver == seat and give.automatic:
            ceilings[give.giver] = min(cards_of(give.cards))
    return {s: cards & state.hands[s] for s, cards in fixed.items()}, ceilings


def another_world(state: rnd.RoundState, seat: int, rng: random.Random) -> rnd.RoundState:
    """``state`` with every card the seat could not see moved at random among the other hands
    and the set-aside pile, consistently with what the seat knows; the other seats' dealt
    hands, new cards and exchange gives scrambled too."""
    fixed, ceilings = _seat_knowledge(state, seat)
    holders = [*_unseen_holders(state, seat), -1]  # -1: the cards set aside
    held = {s: state.hands[s] for s in holders if s >= 0}
    held[-1] = state.set_aside

    def may_hold(holder: int, card: int) -> bool:
        # Above its ceiling a giver holds only the cards the seat gave back (fixed, not moved).
        return not (holder in ceilings and card >= ceilings[holder])

    for _ in range(300):
        a, b = rng.sample(holders, 2)
        movable_a = [c for c in cards_of(held[a]) if not fixed.get(a, 0) >> c & 1]
        movable_b = [c for c in cards_of(held[b]) if not fixed.get(b, 0) >> c & 1]
        if not movable_a or not movable_b:
            continue
        x, y = rng.choice(movable_a), rng.choice(movable_b)
        if may_hold(b, x) and may_hold(a, y):
            held[a] = held[a] & ~(1 << x) | 1 << y
            held[b] = held[b] & ~(1 << y) | 1 << x
    hands = tuple(
        held.get(s, state.hands[s]) if s != seat else state.hands[s]
        for s in range(state.seat_count)
    )

    def noise(s: int, cards: int) -> int:
        return cards if s == seat else rng.getrandbits(52)

    exchanged = tuple(
        give
        if seat in (give.giver, give.receiver)
        else give._replace(cards=rng.getrandbits(52) | 1)
        for give in state.exchanged
    )
    return state._replace(
        hands=hands,
        set_aside=held[-1],
        dealt=tuple(noise(s, cards) for s, cards in enumerate(state.dealt)),
        new_cards=tuple(noise(s, cards) for s, cards in enumerate(state.new_cards)),
        exchanged=exchanged,
    )


def _mid_round(options, players: int, seed: int, round_no: int, moves: int):  # type: ignore[no-untyped-def]
    """A round played at random for up to ``moves`` moves (None if it ended before)."""
    state, _ = start(options, players, seed, round_no)
    rng = random.Random(seed)
    for _ in range(moves):
        if state.phase == rnd.RoundPhase.OVER:
            return None
        state, _ = rnd.step(state, random_command(state, rng))
    return state if state.phase != rnd.RoundPhase.OVER else None


def _acting_seats(state: rnd.RoundState) -> list[int]:
    return [seat for seat in state.players if bots.choose_action(state, seat) is not None]


# --------------------------------------------------------------------------- the information set
@SETTINGS
@given(
    options=option_mixes(),
    seed=st.integers(0, 10**6),
    round_no=st.sampled_from([1, 2]),
    moves=st.integers(0, 40),
    data=st.data(),
)
def test_nothing_hidden_reaches_the_information_set_or_the_move(  # type: ignore[no-untyped-def]
    options, seed, round_no, moves, data
):
    """Hidden cards replaced by others consistent with the seat's view: the same information
    set, and with the same seed the same move."""
    players = data.draw(st.integers(max(options.min_players, 3), min(options.max_players, 6)))
    state = _mid_round(options, players, seed, round_no, moves)
    if state is None:
        return
    rng = random.Random(seed)
    for seat in state.players:
        info = information_set(state, seat)
        changed = 0
        for _ in range(3):
            other = another_world(state, seat, rng)
            changed += other.hands != state.hands
            assert information_set(other, seat) == info
        if seat in _acting_seats(state):
            move = choose_strong(info, random.Random(seed), SMALL)
            other = another_world(state, seat, rng)
            again = choose_strong(information_set(other, seat), random.Random(seed), SMALL)
            assert again == move
        if len(_unseen_holders(state, seat)) >= 2 and state.phase == rnd.RoundPhase.PLAY:
            assert changed, "the other worlds should differ from the true one"


def test_the_view_holds_only_the_seats_own_cards() -> None:
    options = options_for("club")
    state = _mid_round(options, 4, 7, 2, 6)
    assert state is not None
    info = information_set(state, 1)
    assert [h for s, h in enumerate(info.view.hands) if s != 1] == [0, 0, 0]
    assert [h for s, h in enumerate(info.view.dealt) if s != 1] == [0, 0, 0]
    assert [h for s, h in enumerate(info.view.new_cards) if s != 1] == [0, 0, 0]
    assert info.view.set_aside == 0
    assert all(1 in (give.giver, give.receiver) for give in info.view.exchanged)
    assert info.view.hands[1] == state.hands[1]
    assert info.counts == tuple(hand.bit_count() for hand in state.hands)
    assert info.unseen == FULL_DECK & ~state.hands[1] & ~state.played


def _exchange_round() -> rnd.RoundState:
    """Round 2 of club at 4: seat 3 was last (gives 2 to seat 0), seat 2 third (1 to seat 1)."""
    hands = [
        mask_of("3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC 2C"),
        mask_of("3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AD 2D"),
        mask_of("3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH 2H"),
        mask_of("3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2S"),
    ]
    state, _ = rnd.start_round(
        options_for("club"), hands, round_no=2, previous_standings=(0, 1, 2, 3)
    )
    state, _ = rnd.step(state, rnd.ReturnCards(0, mask_of("3C 4C")))
    state, _ = rnd.step(state, rnd.ReturnCards(1, mask_of("3D")))
    return state


def test_the_exchange_it_took_part_in_is_known() -> None:
    state = _exchange_round()
    top, bottom = information_set(state, 0), information_set(state, 3)
    # The bottom gave 2S AS and knows the top holds them; the top gave back 3C 4C.
    assert bottom.known[0] == mask_of("2S AS")
    assert top.known[3] == mask_of("3C 4C")
    # The top got the bottom's strongest cards: the bottom kept nothing above the ace of spades
    # but what the top gave back.
    assert top.allowed[3] == ((1 << parse_card("AS")) - 1 | mask_of("3C 4C")) & top.unseen
    assert top.allowed[3] & mask_of("2C 2D 2H") == 0
    assert top.allowed[3] & mask_of("3C 4C") == mask_of("3C 4C")
    assert information_set(state, 1).known[2] == mask_of("3D")  # seat 1 gave it back
    # A seat outside a pair knows nothing of it.
    middle = information_set(state, 2)
    assert middle.known[0] == 0 and middle.known[3] == 0
    assert middle.allowed[3] == middle.unseen


@SETTINGS
@given(options=option_mixes(), seed=st.integers(0, 10**6), moves=st.integers(0, 30))
def test_sampled_worlds_are_consistent_with_the_view(options, seed, moves):  # type: ignore[no-untyped-def]
    state = _mid_round(options, 4, seed, 2, moves)
    if state is None:
        return
    deck = FULL_DECK | (JOKERS if options.jokers else 0)
    for seat in state.players:
        info = information_set(state, seat)
        world = sample_world(info, random.Random(seed))
        assert world.hands[seat] == state.hands[seat]
        assert tuple(h.bit_count() for h in world.hands) == info.counts
        union = world.set_aside | world.played
        for other, hand in enumerate(world.hands):
            assert not union & hand
            union |= hand
            if other != seat:
                assert hand & info.known[other] == info.known[other]
                assert hand & ~info.allowed[other] == 0
        assert union == deck
        assert world.set_aside.bit_count() == state.set_aside.bit_count()


# --------------------------------------------------------------------------- its moves
@pytest.mark.parametrize("preset", PRESETS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), round_no=st.sampled_from([1, 2]), data=st.data())
def test_every_move_of_strong_bots_is_legal(preset: str, seed: int, round_no: int, data) -> None:  # type: ignore[no-untyped-def]
    """Strong bots in every seat play whole rounds: every move is accepted by the rules."""
    options = data.draw(option_mixes(presets=(preset,)))
    players = data.draw(st.integers(max(options.min_players, 3), min(options.max_players, 6)))
    state, _ = start(options, players, seed, round_no)
    rng = random.Random(seed)
    for _ in range(2_000):
        if state.phase == rnd.RoundPhase.OVER:
            return
        moved = False
        for seat in state.players:
            move = choose_strong(information_set(state, seat), rng, Budget(simulations=24))
            if move is None:
                continue
            if isinstance(move, rnd.PlayCards):
                assert ("play", move.cards) in rnd.legal_actions(state, seat)
            state, _ = rnd.step(state, move)  # raises Rejected on an illegal move
            moved = True
            break
        if not moved:
            state, _ = rnd.step(state, rnd.Timeout())
    raise AssertionError("the round did not end")


def test_the_candidates_start_with_the_basic_move_and_are_legal() -> None:
    state = _mid_round(options_for("traditional"), 5, 11, 1, 3)
    assert state is not None
    seat = state.to_act
    basic = bots.choose_action(state, seat)
    assert basic is not None
    moves = candidate_moves(state, seat, basic)
    assert moves[0] == basic
    legal = rnd.legal_actions(state, seat)
    for move in moves:
        if isinstance(move, rnd.PlayCards):
            assert ("play", move.cards) in legal
        else:
            assert ("pass", 0) in legal


# --------------------------------------------------------------------------- its budget
def _a_choice() -> InformationSet:
    """A seat with more than one move worth weighing."""
    for seed in range(100):
        state = _mid_round(options_for("club"), 4, seed, 1, 4)
        if state is None or state.to_act < 0:
            continue
        basic = bots.choose_action(state, state.to_act)
        if basic is not None and len(candidate_moves(state, state.to_act, basic)) > 2:
            return information_set(state, state.to_act)
    raise AssertionError("no position with a choice")  # pragma: no cover


def test_the_search_stops_when_its_stop_says_so() -> None:
    info = _a_choice()
    asked = 0

    def stop() -> bool:
        nonlocal asked
        asked += 1
        return asked >= 3

    choose_strong(info, random.Random(1), Budget(simulations=10**9, stop=stop))
    assert asked == 3


def test_the_search_plays_no_more_playouts_than_its_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    info = _a_choice()
    played = 0
    real_playout = search.playout

    def counted(*args: Any) -> float:
        nonlocal played
        played += 1
        return real_playout(*args)

    monkeypatch.setattr(search, "playout", counted)
    for budget in (7, 50, 300):
        played = 0
        choose_strong(info, random.Random(1), Budget(simulations=budget))
        assert 0 < played <= budget


def test_with_no_budget_it_makes_the_basic_move() -> None:
    info = _a_choice()
    world = sample_world(info, random.Random(0))
    assert choose_strong(info, random.Random(3), Budget(simulations=0)) == bots.choose_action(
        world, info.seat
    )


# --------------------------------------------------------------------------- levels
def test_a_bots_level_is_in_its_player_id() -> None:
    assert bot_player_id(STRONG, "2") == "bot:strong:2"
    assert level_of("bot:strong:2") == STRONG
    assert level_of("bot:basic:x") == BASIC
    assert level_of("Bot 1") == BASIC  # an id of old, or a player who left
    assert level_of("bot:strong") == BASIC  # an account, not a seat's bot
    assert bot_account(STRONG) == "bot:strong"
    assert check_level("") == BASIC
    with pytest.raises(UnknownBotLevel, match="strong"):
        check_level("grandmaster")
    with pytest.raises(UnknownBotLevel):
        check_bot_player_id("bot:grandmaster:1")
    check_bot_player_id("bot-1a2b")
