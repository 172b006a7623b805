"""Properties that hold for every preset and every mix of options."""

from __future__ import annotations

import dataclasses
import json
import random
import re

from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from president.hosting.projection import Table
from president.hosting.seat_views import table_view
from president.rules import round as rnd
from president.rules.cards import FULL_DECK, JOKERS, card_name, cards_of, names
from president.rules.errors import Rejected
from president.rules.game import GamePhase, new_table
from tests.support.rules_strategies import option_mixes, random_command, start

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MAX_STEPS = 3_000


def _players(data: st.DataObject, options) -> int:  # type: ignore[no-untyped-def]
    return data.draw(st.integers(options.min_players, min(options.max_players, 8)))


def _play_out(state: rnd.RoundState, rng: random.Random, check=None):  # type: ignore[no-untyped-def]
    events: list[rnd.Event] = []
    for _ in range(MAX_STEPS):
        if state.phase == rnd.RoundPhase.OVER:
            return state, events
        command = random_command(state, rng)
        state, produced = rnd.step(state, command)
        events.extend(produced)
        if check is not None:
            check(state)
    raise AssertionError("the round did not end")


@SETTINGS
@given(
    options=option_mixes(),
    data=st.data(),
    seed=st.integers(0, 10**6),
    round_no=st.sampled_from([1, 2]),
)
def test_random_rounds_end_conserve_cards_and_replay(options, data, seed, round_no):  # type: ignore[no-untyped-def]
    players = _players(data, options)
    state, events = start(options, players, seed, round_no)
    deck = FULL_DECK | (JOKERS if options.jokers else 0)
    played = 0

    def conserved(current: rnd.RoundState) -> None:
        union = current.set_aside
        total = current.set_aside.bit_count()
        for hand in current.hands:
            union |= hand
            total += hand.bit_count()
        assert union & played == 0
        assert total + played.bit_count() == deck.bit_count()
        assert union | played == deck

    rng = random.Random(seed)
    for _ in range(MAX_STEPS):
        if state.phase == rnd.RoundPhase.OVER:
            break
        command = random_command(state, rng)
        state, produced = rnd.step(state, command)
        events.extend(produced)
        for event in produced:
            if isinstance(event, rnd.CardsPlayed):
                played |= event.cards
        conserved(state)
    assert state.phase == rnd.RoundPhase.OVER, "the round did not end"
    result = state.result
    assert result is not None
    assert sorted(result.standings) == sorted(state.players)
    assert sum(1 for hand in state.hands if hand) <= 1
    assert rnd.replay(events) == state


def _card_tokens(view: object) -> set[str]:
    text = json.dumps(view)
    return set(re.findall(r'"((?:10|[2-9JQKA])[CDHS]|BJ|RJ)"', text))


def _seen_by(state: rnd.RoundState, seat: int | None) -> set[str]:
    """The cards named in the protobuf view a client at ``seat`` receives (None: a spectator),
    but for the table's options, which name cards of the rules (such as the first lead's)."""
    game = dataclasses.replace(
        new_table(state.options, state.seat_count), phase=GamePhase.ROUND, round=state
    )
    view = table_view(Table(table_id="t", game=game, version=1), seat)
    view.ClearField("options")
    return _card_tokens(json_format.MessageToDict(view))


@SETTINGS
@given(options=option_mixes(), data=st.data(), seed=st.integers(0, 10**6))
def test_views_never_show_another_seats_cards(options, data, seed):  # type: ignore[no-untyped-def]
    players = _players(data, options)
    state, _ = start(options, players, seed, round_no=2)
    rng = random.Random(seed)

    def check(current: rnd.RoundState) -> None:
        for seat in range(current.seat_count):
            seen = _seen_by(current, seat)
            for other in range(current.seat_count):
                if other != seat:
                    hidden = {card_name(c) for c in cards_of(current.hands[other])}
                    assert not seen & hidden, f"seat {seat} sees {seen & hidden} of seat {other}"
            assert not seen & {card_name(c) for c in cards_of(current.set_aside)}
        spectator = _seen_by(current, None)
        for hand in current.hands:
            assert not spectator & {card_name(c) for c in cards_of(hand)}

    check(state)
    _play_out(state, rng, check)


def _all_plays(hand: int, limit: int = 5) -> list[int]:
    cards = cards_of(hand)
    out = []

    def extend(start: int, chosen: int, size: int) -> None:
        if size:
            out.append(chosen)
        if size == limit:
            return
        for index in range(start, len(cards)):
            extend(index + 1, chosen | 1 << cards[index], size + 1)

    extend(0, 0, 0)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=option_mixes(), data=st.data(), seed=st.integers(0, 10**6), stop=st.integers(0, 60))
def test_legal_actions_and_the_rules_agree(options, data, seed, stop):  # type: ignore[no-untyped-def]
    """Every listed action is accepted; every other play of up to five cards is rejected."""
    players = _players(data, options)
    state, _ = start(options, players, seed, round_no=2)
    rng = random.Random(seed)
    for _ in range(stop):
        if state.phase == rnd.RoundPhase.OVER:
            return
        state, _ = rnd.step(state, random_command(state, rng))
    if state.phase == rnd.RoundPhase.OVER:
        return
    for seat in range(players):
        listed = set(rnd.legal_actions(state, seat))
        hand = state.hands[seat]
        sample = _all_plays(hand & ~(-1 << 54))
        if len(sample) > 800:
            sample = rng.sample(sample, 800) + [c for v, c in listed if v in ("play", "give")]
        verb = "give" if state.phase == rnd.RoundPhase.EXCHANGE else "play"
        for cards in sample:
            command = rnd.ReturnCards(seat, cards) if verb == "give" else rnd.PlayCards(seat, cards)
            try:
                rnd.decide(state, command)
            except Rejected:
                accepted = False
            else:
                accepted = True
            assert accepted == ((verb, cards) in listed), (verb, cards, seat)
        try:
            rnd.decide(state, rnd.Pass(seat))
        except Rejected:
            passes = False
        else:
            passes = True
        assert passes == (("pass", 0) in listed)


def test_a_table_is_made_for_every_preset() -> None:
    from president.rules.options import PRESETS, options_for

    for preset in PRESETS:
        options = options_for(preset)
        table = new_table(options)
        assert len(table.seats) == options.max_players


@given(mask=st.integers(0, (1 << 54) - 1))
def test_names_are_the_cards_of_a_mask_named_weakest_first(mask: int) -> None:
    assert names(mask) == [card_name(card) for card in cards_of(mask)]
