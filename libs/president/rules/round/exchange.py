"""The exchange: the handler of a free return, and the start of play once all are in."""

from __future__ import annotations

from president.rules.cards import card_name
from president.rules.errors import ErrorCode, Rejected
from president.rules.round.events import CardsGiven, Event, PlayStarted
from president.rules.round.start import opening
from president.rules.round.state import RoundPhase, RoundState, wrong_phase


def decide_return(state: RoundState, returned: tuple[int, int]) -> list[Event]:
    """The events of a ``ReturnCards`` (or its fields in a tuple), or :class:`Rejected`."""
    seat, cards = returned
    if state.phase != RoundPhase.EXCHANGE:
        raise wrong_phase(state, "return cards")
    owed = next((p for p in state.pending if p.giver == seat), None)
    if owed is None:
        raise Rejected(ErrorCode.WRONG_GIVE, "you have no cards to return in this exchange")
    if cards.bit_count() != owed.size:
        plural = "card" if owed.size == 1 else "cards"
        raise Rejected(ErrorCode.WRONG_GIVE, f"you return exactly {owed.size} {plural}")
    if cards & ~state.hands[seat]:
        missing = " ".join(card_name(c) for c in range(54) if (cards & ~state.hands[seat]) >> c & 1)
        raise Rejected(ErrorCode.NOT_IN_HAND, f"you do not hold {missing}")
    events: list[Event] = [CardsGiven(seat, owed.receiver, cards, False)]
    if len(state.pending) == 1:
        leader, _ = opening(
            state.options,
            state.hands,
            state.players,
            state.round_no,
            state.previous_standings,
            None,
        )
        events.append(PlayStarted(leader))
    return events
