"""Hypothesis strategies and a random-play driver shared by the rules tests."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from hypothesis import strategies as st

from president.deal import deal
from president.rules import round as rnd
from president.rules.cards import to_mask
from president.rules.options import PRESETS, Options, options_for

_SWITCHES: dict[str, st.SearchStrategy[Any]] = {
    "revolution": st.booleans(),
    "four_closes": st.booleans(),
    "strongest_closes": st.booleans(),
    "finish_with_two": st.booleans(),
    "equal_rank": st.booleans(),
    "one_lap": st.booleans(),
    "jokers": st.booleans(),
    "poker_hands": st.booleans(),
    "suit_order": st.booleans(),
    "social": st.booleans(),
    "must_match_type": st.booleans(),
    "skip_on_match": st.sampled_from(["off", "same_or_nothing", "must_pass"]),
    "twos": st.sampled_from(["plain", "up_a_count", "only_twos_beat_two"]),
    "pass_rule": st.sampled_from(["reenter", "sit_out"]),
    "count_rule": st.sampled_from(["exact", "more_beats_fewer"]),
    "later_lead": st.sampled_from(["president", "bottom"]),
    "exchange": st.sampled_from([[2, 1], [2], [1], [1, 1]]),
    "first_lead_must_include": st.booleans(),
}


@st.composite
def option_mixes(draw: st.DrawFn, presets: tuple[str, ...] = PRESETS) -> Options:
    """A preset with a random handful of options switched."""
    preset = draw(st.sampled_from(presets))
    names = draw(st.lists(st.sampled_from(sorted(_SWITCHES)), max_size=6, unique=True))
    overrides = {name: draw(_SWITCHES[name]) for name in names}
    if preset.startswith("house"):
        overrides.pop("equal_rank", None)  # rulebook 000: always on
    return options_for(preset, overrides)


def secret_for(seed: int) -> bytes:
    return hashlib.sha256(f"tests/{seed}".encode()).digest()


def dealt_hands(options: Options, players: int, seed: int) -> tuple[list[int], int]:
    hand_size = (
        (54 if options.jokers else 52) // players if options.deal_extras == "discard" else None
    )
    dealt = deal(secret_for(seed), range(players), jokers=options.jokers, hand_size=hand_size)
    return [to_mask(hand) for hand in dealt.hands], to_mask(dealt.set_aside)


def start(
    options: Options, players: int, seed: int, round_no: int = 1
) -> tuple[rnd.RoundState, list[rnd.Event]]:
    hands, set_aside = dealt_hands(options, players, seed)
    standings = None
    if round_no > 1:
        order = list(range(players))
        random.Random(seed).shuffle(order)
        standings = order
    return rnd.start_round(
        options, hands, round_no=round_no, previous_standings=standings, set_aside=set_aside
    )


def random_command(state: rnd.RoundState, rng: random.Random) -> rnd.Command:
    """A random legal move (sometimes a timeout) for whoever may act."""
    if rng.random() < 0.05:
        return rnd.Timeout()
    if state.phase == rnd.RoundPhase.EXCHANGE:
        owed = rng.choice(state.pending)
        verb, cards = rng.choice(rnd.legal_actions(state, owed.giver))
        return rnd.ReturnCards(owed.giver, cards)
    seats = [state.to_act] if not state.options.rapid else list(state.players)
    rng.shuffle(seats)
    for seat in seats:
        actions = rnd.legal_actions(state, seat)
        if actions:
            verb, cards = rng.choice(actions)
            if verb == "pass":
                return rnd.Pass(seat)
            return rnd.PlayCards(seat, cards)
    return rnd.Timeout()
