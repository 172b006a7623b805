"""Plays and passes: the checks of a play, the turn's walk round the table, trick ends.

:func:`check_play` runs the checks in FORMAT.md's order of precedence;
:func:`decide_play` and :func:`decide_pass` decide ``PlayCards`` and ``Pass``.
:func:`walk` is the general rule for who acts next;
:func:`next_in_trick_fast_path` is its common case.
"""

from __future__ import annotations

from president.rules.cards import (
    JOKER_RANK,
    JOKERS,
    RANK_MASKS,
    RANK_THREE,
    RANK_TWO,
    RANK_WORDS,
    card_name,
    names,
)
from president.rules.combos import SET, Combo, beats_fast_path, check_beats, classify, set_rank
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import Options
from president.rules.round.events import (
    CardsPlayed,
    Event,
    Passed,
    PlayerWentOut,
    RevolutionChanged,
    TrickClosed,
)
from president.rules.round.scoring import round_end
from president.rules.round.state import NOBODY, RoundPhase, RoundState, wrong_phase

#: Ranks whose four of a kind does not close a trick under the social rule.
NOT_SOCIAL = (RANK_TWO, RANK_THREE, JOKER_RANK)
#: Read once: on Python 3.11 each ``RoundPhase.X`` costs an enum lookup, a hot path's share.
_PLAY = RoundPhase.PLAY


def check_play(state: RoundState, seat: int, cards: int, version: int | None = None) -> Combo:
    """Raise :class:`Rejected` unless ``seat`` may play ``cards`` now; returns its combination.

    The checks run in the order of precedence of FORMAT.md, so the first that
    fails is the code reported.
    """
    options = state.options
    if state.phase != _PLAY:
        raise wrong_phase(state, "play")
    if version is not None and version != state.trick_version:
        raise Rejected(
            ErrorCode.STALE,
            f"the trick moved on: your play answered version {version}, "
            f"it is now at version {state.trick_version}; your cards stay in your hand",
        )
    hands = state.hands
    if not 0 <= seat < len(hands) or not hands[seat]:
        raise Rejected(ErrorCode.NOT_YOUR_TURN, f"seat {seat} holds no cards in this round")
    social = False
    if options.rapid:
        if state.sat_out >> seat & 1:
            raise Rejected(ErrorCode.SAT_OUT, "you passed: you are out of this trick")
    elif seat != state.to_act:
        social = options.social and _completes_four(state, seat, cards)
        if not social:
            raise Rejected(ErrorCode.NOT_YOUR_TURN, lambda: f"it is seat {state.to_act}'s turn")
    elif state.sat_out >> seat & 1:  # pragma: no cover - the turn never reaches a sat-out seat
        raise Rejected(ErrorCode.SAT_OUT, "you passed: you are out of this trick")
    if cards & ~hands[seat]:
        missing = cards & ~hands[seat]
        raise Rejected(ErrorCode.NOT_IN_HAND, lambda: f"you do not hold {' '.join(names(missing))}")
    combo = classify(cards, options, state.revolution)
    if (
        options.poker_hands
        and combo.kind == SET
        and combo.size == 4
        and combo.rank != JOKER_RANK
        and cards != hands[seat]
    ):
        raise Rejected(
            ErrorCode.INVALID_COMBINATION,
            "with poker hands, four of a kind is played with a fifth card of your choice",
        )
    if state.must_include and not cards & state.must_include:
        raise Rejected(
            ErrorCode.MUST_INCLUDE,
            f"the first play of the game must include the {card_name(options.first_lead)}",
        )
    if social:
        return combo
    if state.same_or_nothing and seat == state.to_act and combo.rank != state.run_rank:
        raise Rejected(
            ErrorCode.SAME_OR_NOTHING,
            lambda: (
                f"same or nothing: you may only answer with {RANK_WORDS[state.run_rank]}s "
                "of the same count, or pass"
            ),
        )
    top = state.top
    if top:
        top_combo = classify(top, options, state.revolution)
        if not beats_fast_path(combo, top_combo, options, state.revolution):
            check_beats(combo, cards, top_combo, top, options, state.revolution)
    return combo


def _completes_four(state: RoundState, seat: int, cards: int) -> bool:
    """Social rule: these cards complete four of a kind at the top of the trick."""
    rank = set_rank(cards)
    return (
        rank >= 0
        and state.top != 0
        and rank == state.run_rank
        and rank not in NOT_SOCIAL
        and state.run_count + cards.bit_count() == 4
        and not cards & ~state.hands[seat]
    )


def decide_play(state: RoundState, play: tuple[int, int, int | None]) -> list[Event]:
    """The events of a ``PlayCards`` (or its fields in a tuple), or :class:`Rejected`."""
    seat, cards, version = play
    combo = check_play(state, seat, cards, version)
    options = state.options
    hands = list(state.hands)
    left = hands[seat] & ~cards
    hands[seat] = left
    trick_version = state.trick_version + 1
    is_set = combo.kind == SET
    rank = combo.rank if is_set else -1
    matched = state.top != 0 and is_set and rank == state.run_rank
    run_count = state.run_count + combo.size if matched else combo.size
    after: list[Event] = []
    if options.revolution and is_set and combo.size == 4 and rank != JOKER_RANK:
        after.append(RevolutionChanged(not state.revolution))
    if not left:
        after.append(PlayerWentOut(seat, options.finish_with_two and rank == RANK_TWO))
        if len(hands) - hands.count(0) <= 1:
            played = CardsPlayed(seat, cards, trick_version, NOBODY, (), False)
            return [played, *after, round_end(state, hands, [played, *after])]

    closes = bool(cards & JOKERS) or (
        is_set
        and (
            (options.four_closes and run_count >= 4)
            or (options.strongest_closes and rank == (RANK_THREE if state.revolution else RANK_TWO))
            or (options.social and run_count == 4 and rank not in NOT_SOCIAL)
        )
    )
    next_seat, restricted = NOBODY, False
    skipped: tuple[int, ...] = ()
    if not closes:
        sat_out = state.sat_out if options.sit_out else 0
        if options.rapid:
            others = holders_mask(hands) & ~(1 << seat)
            closes = others & ~state.sat_out == 0
        elif not options.one_lap and (not matched or options.skip_rule == "off"):
            next_seat = next_in_trick_fast_path(hands, seat, sat_out)
            closes = next_seat == NOBODY
        else:
            lap_leader = (state.trick_leader if state.top else seat) if options.one_lap else NOBODY
            skip = options.skip_rule if matched else "off"
            next_seat, skipped, restricted, closes = walk(
                hands, sat_out, seat, seat, lap_leader, skip, rank, combo.size
            )
    played = CardsPlayed(seat, cards, trick_version, next_seat, skipped, restricted)
    events: list[Event] = [played, *after] if after else [played]
    if closes:
        events.append(TrickClosed(trick_version + 1, seat, leader_after(options, hands, seat)))
    return events


def decide_pass(state: RoundState, passing: tuple[int, int | None]) -> list[Event]:
    """The events of a ``Pass`` (or its fields in a tuple), or :class:`Rejected`."""
    seat, version = passing
    options = state.options
    if state.phase != _PLAY:
        raise wrong_phase(state, "pass")
    if version is not None and version != state.trick_version:
        raise Rejected(
            ErrorCode.STALE,
            f"the trick moved on: your pass answered version {version}, "
            f"it is now at version {state.trick_version}",
        )
    hands = state.hands
    if not 0 <= seat < len(hands) or not hands[seat]:
        raise Rejected(ErrorCode.NOT_YOUR_TURN, f"seat {seat} holds no cards in this round")
    if options.rapid:
        if state.sat_out >> seat & 1:
            raise Rejected(ErrorCode.SAT_OUT, "you already passed: you are out of this trick")
    elif seat != state.to_act:
        raise Rejected(ErrorCode.NOT_YOUR_TURN, f"it is seat {state.to_act}'s turn")
    if not state.top:
        raise Rejected(ErrorCode.MUST_PLAY, "you open this trick: you must play, not pass")
    if options.rapid and seat == state.top_seat:
        raise Rejected(ErrorCode.MUST_PLAY, "the last player to play cannot pass")
    last = state.top_seat
    if options.rapid:
        sat_out = state.sat_out | 1 << seat
        others = holders_mask(hands) & ~(1 << last)
        if others & ~sat_out == 0:
            return [
                Passed(seat, NOBODY, ()),
                TrickClosed(state.trick_version + 1, last, leader_after(options, hands, last)),
            ]
        return [Passed(seat, NOBODY, ())]
    sat_out = state.sat_out | 1 << seat if options.sit_out else 0
    lap_leader = state.trick_leader if options.one_lap else NOBODY
    next_seat, _, _, closes = walk(hands, sat_out, seat, last, lap_leader, "off", -1, 0)
    if closes:
        return [
            Passed(seat, NOBODY, ()),
            TrickClosed(state.trick_version + 1, last, leader_after(options, hands, last)),
        ]
    return [Passed(seat, next_seat, ())]


def walk(
    hands: list[int] | tuple[int, ...],
    sat_out: int,
    after: int,
    last: int,
    lap_leader: int,
    skip: str,
    rank: int,
    count: int,
) -> tuple[int, tuple[int, ...], bool, bool]:
    """Who acts after ``after``: (seat, skipped seats, same-or-nothing, trick closes).

    Turns go clockwise, past seats without cards and the seats in the mask
    ``sat_out``. The trick closes when the turn would come back to (or past)
    ``last``, the owner of the top play: everyone else has passed, is out of
    the trick, or has no cards. With ``one_lap`` it also closes on reaching
    ``lap_leader``, the seat that led it.
    """
    seat_count = len(hands)
    skipped: tuple[int, ...] = ()
    seat = after
    for _ in range(seat_count):
        seat = (seat + 1) % seat_count
        if seat in (last, lap_leader):
            return NOBODY, skipped, False, True
        if not hands[seat] or sat_out >> seat & 1:
            continue
        if skip == "same_or_nothing":
            skip = "off"
            if (hands[seat] & RANK_MASKS[rank]).bit_count() >= count:
                return seat, skipped, True, False
            skipped = (*skipped, seat)
            continue
        if skip == "must_pass":
            skip = "off"
            skipped = (*skipped, seat)
            continue
        return seat, skipped, False, False
    return NOBODY, skipped, False, True


def next_in_trick_fast_path(hands: list[int], seat: int, sat_out: int) -> int:
    """The next seat after ``seat`` with cards and not in ``sat_out``; NOBODY: the trick closes.

    The common case of :func:`walk` after a play, without its bookkeeping:
    the same seat as ``walk(hands, sat_out, seat, seat, NOBODY, "off", -1, 0)``,
    which closes exactly when this returns NOBODY.
    """
    seat_count = len(hands)
    other = seat
    while True:
        other += 1
        if other == seat_count:
            other = 0
        if other == seat:
            return NOBODY
        if hands[other] and not sat_out >> other & 1:
            return other


def holders_mask(hands: list[int] | tuple[int, ...]) -> int:
    """The seats that still hold cards, as a bitmask."""
    mask = 0
    for seat, hand in enumerate(hands):
        if hand:
            mask |= 1 << seat
    return mask


def leader_after(options: Options, hands: list[int] | tuple[int, ...], winner: int) -> int:
    """Who opens after ``winner`` takes a trick: the winner, or the next holder clockwise."""
    if options.rapid:
        return NOBODY
    seat_count = len(hands)
    for offset in range(seat_count):
        seat = (winner + offset) % seat_count
        if hands[seat]:
            return seat
    return NOBODY
