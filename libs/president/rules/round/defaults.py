"""The server's default moves: the lead and the return it makes when a timer runs out.

The bots (:mod:`president.rules.bots`) make the same choices; both import them
from here, so the round never imports the bots.
"""

from __future__ import annotations

from president.rules.cards import JOKER_RANK, RANK_MASKS
from president.rules.errors import Rejected
from president.rules.round.legal import legal_actions
from president.rules.round.plays import check_play
from president.rules.round.state import RoundState

_NORMAL = tuple(range(14))
_REVERSED = (*range(12, -1, -1), JOKER_RANK)


def rank_groups(hand: int, revolution: bool = False) -> list[tuple[int, int]]:
    """(rank, cards of that rank) for every rank in the hand, weakest first."""
    return [
        (rank, hand & RANK_MASKS[rank])
        for rank in (_REVERSED if revolution else _NORMAL)
        if hand & RANK_MASKS[rank]
    ]


def is_boss(rank: int, revolution: bool) -> bool:
    """The strongest rank of the current order (or the jokers)."""
    return rank == JOKER_RANK or rank == (0 if revolution else 12)


def is_legal_play(state: RoundState, seat: int, cards: int) -> bool:
    """Whether the rules accept ``seat`` playing ``cards`` now."""
    try:
        check_play(state, seat, cards)
    except Rejected:
        return False
    return True


def choose_lead(state: RoundState, seat: int) -> int:
    """Cards to open a trick with: the weakest whole set, bosses last."""
    hand = state.hands[seat]
    revolution = state.revolution
    groups = rank_groups(hand, revolution)
    if state.must_include:
        groups = [g for g in groups if g[1] & state.must_include] + groups
    ordinary = [g for g in groups if not is_boss(g[0], revolution)]
    for _, cards in ordinary + groups:
        if is_legal_play(state, seat, cards):
            return cards
        single = cards & -cards
        if state.must_include & cards:
            single = state.must_include
        if is_legal_play(state, seat, single):
            return single
    return _first_legal_play(state, seat)


def choose_return(state: RoundState, seat: int, count: int) -> int:
    """Cards to return in the exchange: the weakest loose cards, never from a set."""
    hand = state.hands[seat]
    groups = rank_groups(hand)
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


def _first_legal_play(state: RoundState, seat: int) -> int:
    for verb, cards in legal_actions(state, seat):
        if verb == "play":
            return cards
    raise RuntimeError(f"seat {seat} has no legal play")  # pragma: no cover
