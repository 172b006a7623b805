"""The fast step of a plain trick (round.fast_step) agrees with decide then evolve."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from president.rules import round as rnd
from president.rules.cards import RANK_MASKS
from president.rules.errors import Rejected
from president.rules.options import Options, options_for
from president.rules.round.decisions import DECIDE, FAST_STEP
from president.rules.round.evolution import EVOLVE
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
    I_TRICK_LEADER,
    with_changes,
)
from tests.support.rules_strategies import option_mixes, random_command, start


def _general(
    state: rnd.RoundState, command: rnd.Command
) -> tuple[rnd.RoundState, list[rnd.Event]] | None:
    """decide then evolve, without the fast step; None: the command is refused."""
    try:
        events = DECIDE[type(command)](state, command)
    except Rejected:
        return None
    for event in events:
        state = EVOLVE[type(event)](state, event)
    return state, events


def _commands(state: rnd.RoundState, rng: random.Random) -> list[rnd.Command]:
    """Each seat's legal moves, with and without a version, stale ones, and refused plays."""
    commands: list[rnd.Command] = []
    version = state.trick_version
    for seat in range(-1, state.seat_count + 1):
        for verb, cards in rnd.legal_actions(state, seat):
            if verb == "play":
                commands += [rnd.PlayCards(seat, cards), rnd.PlayCards(seat, cards, version)]
                commands.append(rnd.PlayCards(seat, cards, version - 1))
            elif verb == "pass":
                commands += [rnd.Pass(seat), rnd.Pass(seat, version), rnd.Pass(seat, version + 1)]
        hand = state.hands[seat] if 0 <= seat < state.seat_count else 0
        commands.append(rnd.Pass(seat))
        commands.append(rnd.PlayCards(seat, hand & rng.getrandbits(54)))
        commands.append(rnd.PlayCards(seat, hand & -hand))
        for rank in range(14):  # one card and all cards of each rank held, refused or not
            group = hand & RANK_MASKS[rank]
            if group:
                commands += [rnd.PlayCards(seat, group & -group), rnd.PlayCards(seat, group)]
        commands.append(rnd.PlayCards(seat, rng.getrandbits(52)))
    return commands


def _check_state(state: rnd.RoundState, rng: random.Random) -> int:
    fast_taken = 0
    for command in _commands(state, rng):
        fast = FAST_STEP[type(command)](state, command)
        if fast is None:
            continue
        fast_taken += 1
        general = _general(state, command)
        assert general is not None, command
        assert fast[1] == general[1], command
        assert fast[0] == general[0], command
        assert [type(event) for event in fast[1]] == [type(event) for event in general[1]]
        assert rnd.step(state, command) == general
    return fast_taken


def _play_round(options: Options, players: int, seed: int, round_no: int) -> int:
    state, _ = start(options, players, seed, round_no)
    rng = random.Random(seed)
    fast_taken = 0
    while state.phase != rnd.RoundPhase.OVER:
        fast_taken += _check_state(state, rng)
        state, _ = rnd.step(state, random_command(state, rng))
    return fast_taken


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    options=option_mixes(),
    data=st.data(),
    seed=st.integers(0, 10**6),
    round_no=st.sampled_from([1, 2]),
)
def test_the_fast_step_is_decide_then_evolve(
    options: Options, data: st.DataObject, seed: int, round_no: int
) -> None:
    """At every state of random rounds, any mix of options: the same events and state."""
    players = data.draw(st.integers(options.min_players, min(options.max_players, 7)))
    _play_round(options, players, seed, round_no)


def test_the_fast_step_serves_most_moves_of_classic_and_club() -> None:
    """Not vacuous: in classic, club and house it takes most moves."""
    for preset, overrides in [
        ("classic", {}),
        ("club", {}),
        ("club", {"pass_rule": "sit_out"}),
        ("club", {"equal_rank": True}),
        ("house", {}),
    ]:
        options = options_for(preset, overrides)
        assert options.plain_tricks
        for seed in range(3):
            assert _play_round(options, 4, seed, 2) > 100, (preset, overrides)
    assert options_for("house").plain_tricks
    assert not options_for("house-rapid").plain_tricks
    assert not options_for("traditional").plain_tricks


@st.composite
def plain_trick_options(draw: st.DrawFn) -> Options:
    """Classic, club or house with the switches the fast step reads, each on or off."""
    preset = draw(st.sampled_from(["classic", "club", "house"]))
    overrides = {
        "revolution": draw(st.booleans()),
        "four_closes": draw(st.booleans()),
        "strongest_closes": draw(st.booleans()),
        "finish_with_two": draw(st.booleans()),
        "skip_on_match": draw(st.sampled_from(["off", "same_or_nothing", "must_pass"])),
        "pass_rule": draw(st.sampled_from(["reenter", "sit_out"])),
    }
    if preset != "house":
        overrides["equal_rank"] = draw(st.booleans())
    return options_for(preset, overrides)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    options=st.one_of(plain_trick_options(), option_mixes()),
    data=st.data(),
    seed=st.integers(0, 10**6),
    revolution=st.booleans(),
    sat_out=st.integers(0, 15),
)
def test_the_fast_step_agrees_on_tricks_random_play_seldom_reaches(
    options: Options, data: st.DataObject, seed: int, revolution: bool, sat_out: int
) -> None:
    """Any top and run, revolutions, seats out of the trick or out of cards, same or nothing."""
    state, _ = start(options, 4, seed)
    while state.phase == rnd.RoundPhase.EXCHANGE:
        state, _ = rnd.step(state, rnd.Timeout())
    hands = [data.draw(st.integers(0, (1 << 52) - 1)) for _ in range(4)]
    to_act = data.draw(st.integers(0, 3))
    hands[to_act] |= data.draw(st.integers(1, (1 << 52) - 1))
    if data.draw(st.booleans()):  # four of a kind: a revolution, four closing the trick
        hands[to_act] |= 0xF << 4 * data.draw(st.integers(0, 12))
    rank = data.draw(st.integers(0, 12)) if data.draw(st.booleans()) else -1
    top = 0
    if rank >= 0:
        suits = data.draw(st.sets(st.integers(0, 3), min_size=1))
        top = sum(1 << (4 * rank + suit) for suit in suits)
    changes: dict[int, object] = {
        I_HANDS: tuple(hands),
        I_TO_ACT: to_act,
        I_TOP: top,
        I_TOP_SEAT: data.draw(st.integers(0, 3)) if top else -1,
        I_TRICK_LEADER: data.draw(st.integers(0, 3)) if top else -1,
        I_RUN_RANK: rank,
        I_RUN_COUNT: top.bit_count() + data.draw(st.integers(0, 2)) if top else 0,
        I_SAME: bool(top) and data.draw(st.booleans()),
        I_REVOLUTION: revolution,
        I_SAT_OUT: sat_out & ~(1 << to_act) if top else 0,
        I_MUST_INCLUDE: 0,
    }
    _check_state(with_changes(state, changes), random.Random(seed))
