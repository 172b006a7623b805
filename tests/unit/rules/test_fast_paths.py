"""Each named fast path of the engine agrees with the general function it shortcuts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from president.play.offline import play_game
from president.rules import game as g
from president.rules.cards import RANK_MASKS
from president.rules.combos import beats_fast_path, check_beats, classify
from president.rules.errors import Rejected
from president.rules.options import PRESETS, Options, options_for
from president.rules.round.plays import next_in_trick_fast_path, walk
from president.rules.round.state import NOBODY
from tests.support.rules_strategies import option_mixes


@st.composite
def one_rank_plays(draw: st.DrawFn) -> int:
    """One to four cards of one rank, 3 to 2 (no jokers)."""
    rank = draw(st.integers(0, 12))
    suits = draw(st.sets(st.integers(0, 3), min_size=1, max_size=4))
    return sum(1 << (4 * rank + suit) for suit in suits) & RANK_MASKS[rank]


def _accepted(play: int, top: int, options: Options, revolution: bool) -> bool:
    try:
        check_beats(
            classify(play, options, revolution),
            play,
            classify(top, options, revolution),
            top,
            options,
            revolution,
        )
    except Rejected:
        return False
    return True


@given(
    options=option_mixes(), play=one_rank_plays(), top=one_rank_plays(), revolution=st.booleans()
)
def test_beats_fast_path_accepts_only_what_check_beats_accepts(
    options: Options, play: int, top: int, revolution: bool
) -> None:
    fast = beats_fast_path(
        classify(play, options, revolution), classify(top, options, revolution), options, revolution
    )
    accepted = _accepted(play, top, options, revolution)
    if fast:
        assert accepted
    if options.plain_compare and play.bit_count() == top.bit_count():
        assert fast == accepted


@given(data=st.data(), seat_count=st.integers(3, 8))
def test_next_in_trick_fast_path_is_walk_after_a_plain_play(
    data: st.DataObject, seat_count: int
) -> None:
    hands = data.draw(st.lists(st.integers(0, 3), min_size=seat_count, max_size=seat_count))
    seat = data.draw(st.integers(0, seat_count - 1))
    sat_out = data.draw(st.integers(0, (1 << seat_count) - 1))
    fast = next_in_trick_fast_path(hands, seat, sat_out)
    general, skipped, restricted, closes = walk(hands, sat_out, seat, seat, NOBODY, "off", -1, 0)
    assert (fast, fast == NOBODY) == (general, closes)
    assert skipped == () and not restricted


@pytest.mark.parametrize("preset", PRESETS)
def test_evolve_all_is_evolve_event_by_event(preset: str) -> None:
    """``evolve_all`` folds a command's events into the round and rebuilds the table once
    (``_with_round``): the same table as ``evolve`` one event at a time, command by command."""
    options = options_for(preset)
    steps: list[tuple[g.GameState, list[Any]]] = []
    before = g.new_table(options, 4)

    def listener(event: Any, after: g.GameState) -> None:
        if not steps or steps[-1][0] is not after:
            steps.append((after, []))
        steps[-1][1].append(event)

    final, _ = play_game(options, 4, seed=3, rounds=2, listener=listener)
    game = before
    for after, events in steps:
        game = g.evolve_all(game, events)
        assert game == after
    assert game == final
