"""Timeouts: what the server does for a seat when the timer runs out."""

from __future__ import annotations

from president.rules.errors import ErrorCode, Rejected
from president.rules.round.defaults import choose_lead, choose_return
from president.rules.round.events import Event, TimedOut, TrickClosed
from president.rules.round.evolution import evolve
from president.rules.round.exchange import decide_return
from president.rules.round.plays import decide_pass, decide_play, leader_after
from president.rules.round.state import NOBODY, RoundPhase, RoundState, wrong_phase


def decide_timeout(state: RoundState, timeout: tuple[int | None]) -> list[Event]:
    """The events of a ``Timeout``: :class:`TimedOut` and the default moves it stands for."""
    (expected,) = timeout
    if expected is not None and expected != state.timer_key:
        raise Rejected(
            ErrorCode.STALE,
            f"this timer was set at {expected}; the table has moved on to {state.timer_key}",
        )
    if state.phase == RoundPhase.OVER:
        raise wrong_phase(state, "time out")
    events: list[Event] = []
    if state.phase == RoundPhase.EXCHANGE:
        events.append(TimedOut(NOBODY))
        current = state
        for owed in state.pending:
            cards = choose_return(current, owed.giver, owed.size)
            produced = decide_return(current, (owed.giver, cards))
            events.extend(produced)
            for event in produced:
                current = evolve(current, event)
        return events
    options = state.options
    if options.rapid:
        if state.top:
            return [
                TimedOut(NOBODY),
                TrickClosed(
                    state.trick_version + 1,
                    state.top_seat,
                    leader_after(options, state.hands, state.top_seat),
                ),
            ]
        seat = max(
            (seat for seat in state.players if state.hands[seat]),
            key=lambda s: (state.hands[s].bit_count(), -s),
        )
        return [TimedOut(seat), *decide_play(state, (seat, choose_lead(state, seat), None))]
    seat = state.to_act
    if state.top:
        return [TimedOut(seat), *decide_pass(state, (seat, None))]
    return [TimedOut(seat), *decide_play(state, (seat, choose_lead(state, seat), None))]
