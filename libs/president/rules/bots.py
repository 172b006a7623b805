"""A heuristic bot: practice seats, stand-ins for players who left, and timeouts.

It sheds low cards and whole sets early, keeps its 2s (and jokers) to take
the lead late, does not break sets to answer smaller plays, and returns its
weakest loose cards in the exchange. Every choice is checked against the
rules, so a bot never makes an illegal move. Its lead and its return are the
server's default moves (:mod:`president.rules.round.defaults`).
"""

from __future__ import annotations

from president.rules.cards import JOKER_RANK, RANK_TWO, weakest
from president.rules.combos import strength
from president.rules.round import Command, Pass, PlayCards, ReturnCards, RoundPhase, RoundState
from president.rules.round.defaults import (
    choose_lead,
    choose_return,
    is_boss,
    is_legal_play,
    rank_groups,
)

__all__ = ["choose_action", "choose_answer", "choose_lead", "choose_return"]

#: Read once: on Python 3.11 each ``RoundPhase.X`` costs an enum lookup, a hot path's share.
_EXCHANGE, _PLAY = RoundPhase.EXCHANGE, RoundPhase.PLAY


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
    groups = rank_groups(hand, revolution)
    allow_boss = cards_left <= need + 3 or opponents_near_out
    allow_break = cards_left <= 5 or opponents_near_out
    floor = strength(state.run_rank, revolution) if state.run_rank >= 0 else -1
    for rank, cards in groups:
        if is_boss(rank, revolution) and not allow_boss:
            continue
        if strength(rank, revolution) < floor and rank != RANK_TWO:
            continue  # cannot beat the top in the current order
        size = cards.bit_count()
        if size == need:
            if is_legal_play(state, seat, cards):
                return cards
        elif size > need and allow_break:
            part = weakest(cards, need)
            if is_legal_play(state, seat, part):
                return part
        elif rank == JOKER_RANK and is_legal_play(state, seat, cards & -cards):
            return cards & -cards
    return None


def choose_action(state: RoundState, seat: int) -> Command | None:
    """The bot's move for ``seat``, or None when it has nothing to do now."""
    if state.phase == _EXCHANGE:
        owed = next((p for p in state.pending if p.giver == seat), None)
        if owed is None:
            return None
        return ReturnCards(seat, choose_return(state, seat, owed.size))
    if state.phase != _PLAY or not state.hands[seat]:
        return None
    if not state.options.rapid and state.to_act != seat:
        return None
    if state.options.rapid and state.sat_out >> seat & 1:
        return None
    if not state.top:
        return PlayCards(seat, choose_lead(state, seat), state.trick_version)
    if state.options.rapid and state.top_seat == seat:
        return None  # wait: the others answer or pass
    answer = choose_answer(state, seat)
    if answer is None:
        return Pass(seat, state.trick_version)
    return PlayCards(seat, answer, state.trick_version)
