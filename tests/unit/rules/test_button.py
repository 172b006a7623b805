"""The play button's words (rulebook 002) and the preview that asks the engine."""

from __future__ import annotations

import pytest

from president.rules import game as g
from president.rules import round as rnd
from president.rules.button import card_words, named_twice, play_label, preview_play
from president.rules.cards import mask_of, parse_card, parse_cards
from president.rules.combos import FULL_HOUSE, STRAIGHT
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import options_for
from tests.support.rules_strategies import dealt_hands


@pytest.mark.parametrize(
    ("cards", "named", "label"),
    [
        ("9H 9S", "", "Play two 9s"),
        ("3C 3D 3H", "3C", "Play the 3 of clubs and two 3s"),
        ("3C", "3C", "Play the 3 of clubs"),
        ("3C 3S", "3C", "Play the 3 of clubs and a 3"),
        ("9D", "", "Play a 9"),
        ("8C", "", "Play an 8"),
        ("AS", "", "Play an ace"),
        ("JC JD JH", "", "Play three jacks"),
        ("KC KD KH KS", "", "Play four kings"),
        ("10H 10S", "", "Play two 10s"),
        ("2S", "", "Play a 2"),
        ("RJ", "", "Play a joker"),
        ("BJ RJ", "", "Play two jokers"),
        ("QH", "QH", "Play the queen of hearts"),
    ],
)
def test_the_button_says_what_you_will_play(cards: str, named: str, label: str) -> None:
    assert play_label(mask_of(cards), mask_of(named) if named else 0) == label


def test_poker_hands_are_named_by_their_kind() -> None:
    assert play_label(mask_of("4C 5C 6D 7C 8C"), 0, STRAIGHT) == "Play a straight"
    assert play_label(mask_of("4C 4D 4H 7C 7S"), 0, FULL_HOUSE) == "Play a full house"


def test_card_words() -> None:
    assert card_words(parse_card("3C")) == "the 3 of clubs"
    assert card_words(parse_card("KD")) == "the king of diamonds"
    assert card_words(parse_card("BJ")) == "the black joker"


def test_a_card_named_twice_is_refused_like_the_table_refuses_it() -> None:
    refusal = named_twice(parse_cards("9H 9H 9S"))
    assert refusal is not None and refusal.code == ErrorCode.NOT_IN_HAND
    assert "9H more than once" in refusal.reason
    assert named_twice(parse_cards("9H 9S")) is None


def _game_in_play(preset: str = "house") -> g.GameState:
    options = options_for(preset)
    game = g.new_table(options, 4)
    for seat in range(4):
        game = g.evolve_all(
            game, g.decide(game, g.SitDown(seat, f"p{seat}", display_name=f"P{seat}"))
        )
    game = g.evolve_all(game, g.decide(game, g.StartGame()))
    hands, set_aside = dealt_hands(options, 4, seed=7)
    return g.evolve_all(game, g.decide(game, g.DealRound(tuple(hands), set_aside)))


def test_the_preview_is_the_engines_decision_for_every_single_and_set_of_a_hand() -> None:
    """Every one-rank selection of the hand, and every single of the deck: playable iff
    decide accepts it; a refusal is decide's own code and sentence; nothing changes."""
    game = _game_in_play()
    state = game.round
    assert state is not None and state.phase == rnd.RoundPhase.PLAY
    for seat in range(4):
        hand = state.hands[seat]
        selections = [[card] for card in range(52)]
        selections += [
            [c for c in range(rank * 4, rank * 4 + 4) if hand >> c & 1][:count]
            for rank in range(13)
            for count in (2, 3, 4)
        ]
        for cards in selections:
            if not cards:
                continue
            preview = preview_play(game, seat, cards)
            mask = sum(1 << c for c in cards)
            try:
                g.decide(game, rnd.PlayCards(seat, mask, state.trick_version))
            except Rejected as refusal:
                assert preview.refusal is not None
                assert (preview.refusal.code, preview.refusal.reason) == (
                    refusal.code,
                    refusal.reason,
                )
            else:
                assert preview.playable and preview.label.startswith("Play ")
    assert game.round is state  # the preview committed nothing
