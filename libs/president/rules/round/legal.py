"""Legal actions: every move a seat may make now, and the plays a hand could make."""

from __future__ import annotations

from president.rules.cards import JOKERS, RANK_MASKS
from president.rules.combos import set_rank
from president.rules.errors import Rejected
from president.rules.round.plays import check_play, decide_pass
from president.rules.round.state import RoundPhase, RoundState

Action = tuple[str, int]

#: Read once: on Python 3.11 each ``RoundPhase.X`` costs an enum lookup, a hot path's share.
_EXCHANGE, _PLAY = RoundPhase.EXCHANGE, RoundPhase.PLAY


def legal_actions(state: RoundState, seat: int) -> list[Action]:
    """Every action ``seat`` may take now: ``("play", cards)``, ``("pass", 0)``, ``("give", …)``.

    Each listed action is accepted by :func:`decide`; every other is rejected.
    """
    if state.phase == _EXCHANGE:
        owed = next((p for p in state.pending if p.giver == seat), None)
        if owed is None:
            return []
        return [("give", cards) for cards in subsets_of_size(state.hands[seat], owed.size)]
    if state.phase != _PLAY or not 0 <= seat < state.seat_count or not state.hands[seat]:
        return []
    actions: list[Action] = []
    candidates = candidate_plays(state.hands[seat], state.options.poker_hands)
    if not state.options.rapid and seat != state.to_act:
        # Out of turn only the social rule's four of a kind may be played: a set of
        # the trick's rank. Trying only those spares a refusal per other candidate.
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


def candidate_plays(hand: int, poker_hands: bool) -> list[int]:
    """Every set of cards from ``hand`` that could be a play: one-rank subsets, poker fives."""
    plays = []
    for rank in range(14):
        group = hand & RANK_MASKS[rank]
        if not group:
            continue
        sub = group
        while sub:
            plays.append(sub)
            sub = (sub - 1) & group
    if poker_hands:
        plays.extend(cards for cards in subsets_of_size(hand & ~JOKERS, 5) if set_rank(cards) < 0)
    return plays


def subsets_of_size(mask: int, size: int) -> list[int]:
    """Every set of ``size`` cards of ``mask``."""
    cards = [1 << c for c in range(54) if mask >> c & 1]
    out: list[int] = []

    def extend(start: int, chosen: int, left: int) -> None:
        if left == 0:
            out.append(chosen)
            return
        for index in range(start, len(cards) - left + 1):
            extend(index + 1, chosen | cards[index], left - 1)

    extend(0, 0, size)
    return out
