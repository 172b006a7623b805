"""A heuristic bot: practice seats, stand-ins for players who left, and timeouts.

It sheds low cards and whole sets early, keeps its 2s (and jokers) to take
the lead late, does not break sets to answer smaller plays, and returns its
weakest loose cards in the exchange. Every choice is checked against the
rules, so a bot never makes an illegal move.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from president.rules import round as rules_round
from president.rules.cards import JOKER_RANK, RANK_MASKS, RANK_TWO
from president.rules.combos import strength
from president.rules.errors import Rejected

if TYPE_CHECKING:
    from president.rules.round import Command, RoundState


_NORMAL = tuple(range(14))
_REVERSED = (*range(12, -1, -1), JOKER_RANK)


def _groups(hand: int, revolution: bool = False) -> list[tuple[int, int]]:
    """(rank, cards of that rank) for every rank in the hand, weakest first."""
    return [
        (rank, hand & RANK_MASKS[rank])
        for rank in (_REVERSED if revolution else _NORMAL)
        if hand & RANK_MASKS[rank]
    ]


def _is_boss(rank: int, revolution: bool) -> bool:
    return rank == JOKER_RANK or rank == (0 if revolution else 12)


def _legal(state: RoundState, seat: int, cards: int) -> bool:
    try:
        rules_round.check_play(state, seat, cards)
    except Rejected:
        return False
    return True


def choose_lead(state: RoundState, seat: int) -> int:
    """Cards to open a trick with: the weakest whole set, bosses last."""
    hand = state.hands[seat]
    revolution = state.revolution
    groups = _groups(hand, revolution)
    if state.must_include:
        groups = [g for g in groups if g[1] & state.must_include] + groups
    ordinary = [g for g in groups if not _is_boss(g[0], revolution)]
    for _, cards in ordinary + groups:
        if _legal(state, seat, cards):
            return cards
        single = cards & -cards
        if state.must_include & cards:
            single = state.must_include
        if _legal(state, seat, single):
            return single
    return _first_legal_play(state, seat)


def choose_answer(state: RoundState, seat: int) -> int | None:
    """Cards to answer the top with, or None to pass."""
    hand = state.hands[seat]
    revolution = state.revolution
    need = state.top.bit_count()
    cards_left = hand.bit_count()
    opponents_near_out = False
    for other_seat, other in enumerate(state.hands):
        if other_seat != seat and 0 < other.bit_count() <= 2:
            opponents_near_out = True
            break
    groups = _groups(hand, revolution)
    allow_boss = cards_left <= need + 3 or opponents_near_out
    allow_break = cards_left <= 5 or opponents_near_out
    floor = strength(state.run_rank, revolution) if state.run_rank >= 0 else -1
    for rank, cards in groups:
        if _is_boss(rank, revolution) and not allow_boss:
            continue
        if strength(rank, revolution) < floor and rank != RANK_TWO:
            continue  # cannot beat the top in the current order
        size = cards.bit_count()
        if size == need:
            if _legal(state, seat, cards):
                return cards
        elif size > need and allow_break:
            part = _lowest_bits(cards, need)
            if _legal(state, seat, part):
                return part
        elif rank == JOKER_RANK and _legal(state, seat, cards & -cards):
            return cards & -cards
    return None


def choose_return(state: RoundState, seat: int, count: int) -> int:
    """Cards to return in the exchange: the weakest loose cards, never from a set."""
    hand = state.hands[seat]
    groups = _groups(hand)
    chosen = 0
    for size in (1, 2, 3, 4):
        for _, cards in groups:
            if cards.bit_count() != size:
                continue
            while cards and chosen.bit_count() < count:
                low = cards & -cards
                chosen |= low
                cards ^= low
            if chosen.bit_count() == count:
                return chosen
    return chosen


def choose_action(state: RoundState, seat: int) -> Command | None:
    """The bot's move for ``seat``, or None when it has nothing to do now."""
    r = rules_round
    if state.phase == r.EXCHANGE:
        owed = next((p for p in state.pending if p.giver == seat), None)
        if owed is None:
            return None
        return r.ReturnCards(seat, choose_return(state, seat, owed.size))
    if state.phase != r.PLAY or not state.hands[seat]:
        return None
    if not state.options.rapid and state.to_act != seat:
        return None
    if state.options.rapid and state.sat_out >> seat & 1:
        return None
    if not state.top:
        return r.PlayCards(seat, choose_lead(state, seat), state.trick_version)
    if state.options.rapid and state.top_seat == seat:
        return None  # wait: the others answer or pass
    answer = choose_answer(state, seat)
    if answer is None:
        return r.Pass(seat, state.trick_version)
    return r.PlayCards(seat, answer, state.trick_version)


def _lowest_bits(mask: int, count: int) -> int:
    chosen = 0
    for _ in range(count):
        low = mask & -mask
        chosen |= low
        mask ^= low
    return chosen


def _first_legal_play(state: RoundState, seat: int) -> int:
    for verb, cards in rules_round.legal_actions(state, seat):
        if verb == "play":
            return cards
    raise RuntimeError(f"seat {seat} has no legal play")  # pragma: no cover
