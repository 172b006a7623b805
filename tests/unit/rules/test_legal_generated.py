"""The generated legal actions are the ones trying every candidate play finds, in its order.

The oracle below is the implementation ``legal_actions`` had before it generated
its plays: every one-rank subset of the hand (and every five cards, with poker
hands) tried through ``check_play``, the pass through ``decide_pass``. The order
matters: a seat's view lists the legal actions on the wire, and bots and the
default move take them in order.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from president.rules import round as rnd
from president.rules.cards import JOKERS, RANK_MASKS
from president.rules.combos import set_rank
from president.rules.errors import Rejected
from president.rules.options import Options
from president.rules.round.legal import poker_hands, subsets_of_size
from president.rules.round.plays import check_play, decide_pass
from president.rules.round.state import (
    I_HANDS,
    I_MUST_INCLUDE,
    I_REVOLUTION,
    I_RUN_COUNT,
    I_RUN_RANK,
    I_SAME,
    I_SAT_OUT,
    I_TO_ACT,
    I_TOP,
    I_TOP_SEAT,
    with_changes,
)
from tests.support.rules_strategies import option_mixes, random_command, start


def _tried_candidate_plays(hand: int, poker: bool) -> list[int]:
    plays = []
    for rank in range(14):
        group = hand & RANK_MASKS[rank]
        sub = group
        while sub:
            plays.append(sub)
            sub = (sub - 1) & group
    if poker:
        plays.extend(c for c in subsets_of_size(hand & ~JOKERS, 5) if set_rank(c) < 0)
    return plays


def tried_legal_actions(state: rnd.RoundState, seat: int) -> list[rnd.Action]:
    """The old ``legal_actions``: every candidate tried through the checks of a submitted move."""
    if state.phase == rnd.RoundPhase.EXCHANGE:
        owed = next((p for p in state.pending if p.giver == seat), None)
        if owed is None:
            return []
        return [("give", cards) for cards in subsets_of_size(state.hands[seat], owed.size)]
    if state.phase != rnd.RoundPhase.PLAY or not 0 <= seat < state.seat_count:
        return []
    if not state.hands[seat]:
        return []
    actions: list[rnd.Action] = []
    candidates = _tried_candidate_plays(state.hands[seat], state.options.poker_hands)
    if not state.options.rapid and seat != state.to_act:
        if not (state.options.social and state.top):
            candidates = []
        candidates = [cards for cards in candidates if set_rank(cards) == state.run_rank]
    for cards in candidates:
        try:
            check_play(state, seat, cards)
        except Rejected:
            continue
        actions.append(("play", cards))
    try:
        decide_pass(state, (seat, None))
    except Rejected:
        pass
    else:
        actions.append(("pass", 0))
    return actions


def _agree(state: rnd.RoundState) -> None:
    for seat in range(-1, state.seat_count + 1):
        assert rnd.legal_actions(state, seat) == tried_legal_actions(state, seat), seat


def _players(data: st.DataObject, options: Options) -> int:
    return data.draw(st.integers(options.min_players, min(options.max_players, 7)))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    options=option_mixes(),
    data=st.data(),
    seed=st.integers(0, 10**6),
    round_no=st.sampled_from([1, 2]),
)
def test_every_state_of_a_random_round_lists_what_trying_lists(
    options: Options, data: st.DataObject, seed: int, round_no: int
) -> None:
    """Through whole rounds of random moves, every seat's list, order included, at every state."""
    state, _ = start(options, _players(data, options), seed, round_no)
    rng = random.Random(seed)
    for _ in range(3_000):
        _agree(state)
        if state.phase == rnd.RoundPhase.OVER:
            return
        state, _ = rnd.step(state, random_command(state, rng))
    raise AssertionError("the round did not end")


#: The most cards a seat holds: 54 cards (jokers in) dealt to the fewest players, 3.
MOST_CARDS_HELD = 18


def card_sets(deck: int, fewest: int, most: int) -> st.SearchStrategy[int]:
    """Sets of ``fewest`` to ``most`` of the first ``deck`` cards, as a bitmask."""
    cards = st.sets(st.integers(0, deck - 1), min_size=fewest, max_size=most)
    return cards.map(lambda chosen: sum(1 << card for card in chosen))


@st.composite
def one_rank_tops(draw: st.DrawFn) -> int:
    rank = draw(st.integers(0, 13))
    suits = draw(st.sets(st.integers(0, 1 if rank == 13 else 3), min_size=1))
    return sum(1 << (4 * rank + suit) for suit in suits)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    options=option_mixes(),
    data=st.data(),
    seed=st.integers(0, 10**6),
    hand=card_sets(54, 1, MOST_CARDS_HELD),
    revolution=st.booleans(),
    same_or_nothing=st.booleans(),
    sat_out=st.integers(0, 15),
)
def test_any_hand_against_any_top_lists_what_trying_lists(
    options: Options,
    data: st.DataObject,
    seed: int,
    hand: int,
    revolution: bool,
    same_or_nothing: bool,
    sat_out: int,
) -> None:
    """Tops and turns random play seldom reaches: ties by suit, jokers, poker on top,
    revolutions, same or nothing, the social rule out of turn, the first lead's card."""
    state, _ = start(options, 4, seed)
    while state.phase == rnd.RoundPhase.EXCHANGE:
        state, _ = rnd.step(state, rnd.Timeout())
    if not options.jokers:
        hand &= ~JOKERS
    hand = hand & ~(-1 << 54) or 1
    if options.poker_hands and data.draw(st.booleans()):
        fives = poker_hands(data.draw(card_sets(52, 5, 9)))
        top = data.draw(st.sampled_from(fives)) if fives else 0
    else:
        top = data.draw(one_rank_tops()) if data.draw(st.booleans()) else 0
    rank = set_rank(top) if top else -1
    hands = list(state.hands)
    hands[0] = hand
    changes: dict[int, object] = {
        I_HANDS: tuple(hands),
        I_TOP: top,
        I_TOP_SEAT: data.draw(st.integers(0, 3)) if top else -1,
        I_TO_ACT: data.draw(st.sampled_from([0, 1, -1])),
        I_RUN_RANK: rank,
        I_RUN_COUNT: top.bit_count() + data.draw(st.integers(0, 2)) if rank >= 0 else 0,
        I_SAME: same_or_nothing and rank >= 0,
        I_REVOLUTION: revolution,
        I_SAT_OUT: sat_out if top else 0,
        I_MUST_INCLUDE: data.draw(st.sampled_from([0, hand & -hand, 1 << 0, 1 << 41])),
    }
    _agree(with_changes(state, changes))


def test_poker_hands_are_the_five_card_sets_classify_takes() -> None:
    from president.rules.combos import classify
    from president.rules.errors import Rejected as Refused
    from president.rules.options import options_for

    options = options_for("club", {"poker_hands": True})
    rng = random.Random(7)
    for _ in range(60):
        hand = rng.getrandbits(52) & rng.getrandbits(52)
        expected = []
        for cards in subsets_of_size(hand, 5):
            try:
                classify(cards, options)
            except Refused:
                continue
            expected.append(cards)
        assert poker_hands(hand | JOKERS) == expected
