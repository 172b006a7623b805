"""Folding events into a round's state: ``evolve``, one handler per event type.

The handlers hold no rules: each event says what happened. ``EVOLVE`` maps
an event's type to its handler; :func:`evolve` and the command loop of
:func:`president.rules.round.decisions.step` look it up directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from president.rules.cards import RANK_MASKS
from president.rules.round.events import (
    CardsGiven,
    CardsPlayed,
    Event,
    Passed,
    PlayerWentOut,
    PlayStarted,
    RevolutionChanged,
    RoundEnded,
    RoundStarted,
    TimedOut,
    TrickClosed,
)
from president.rules.round.state import (
    I_EXCHANGED,
    I_FINISHED,
    I_HANDS,
    I_MOVES,
    I_MUST_INCLUDE,
    I_NEW,
    I_PENALISED,
    I_PENDING,
    I_PHASE,
    I_PLAYED,
    I_RESULT,
    I_REVOLUTION,
    I_RUN_COUNT,
    I_RUN_RANK,
    I_SAME,
    I_SAT_OUT,
    I_TO_ACT,
    I_TOP,
    I_TOP_SEAT,
    I_TRICK_LEADER,
    I_TRICK_VERSION,
    NOBODY,
    Pending,
    RoundPhase,
    RoundState,
    make_state,
    tuple_new,
    with_changes,
)


def initial_state(started: RoundStarted) -> RoundState:
    """The state a :class:`RoundStarted` event describes."""
    seat_count = len(started.hands)
    return RoundState(
        options=started.options,
        round_no=started.round_no,
        players=started.players,
        scores=started.scores,
        previous_standings=started.previous_standings,
        phase=RoundPhase.EXCHANGE,
        hands=started.hands,
        to_act=NOBODY,
        top=0,
        top_seat=NOBODY,
        trick_leader=NOBODY,
        trick_version=0,
        moves=0,
        sat_out=0,
        run_rank=-1,
        run_count=0,
        same_or_nothing=False,
        revolution=False,
        finished=(),
        penalised=(),
        pending=(),
        new_cards=(0,) * seat_count,
        must_include=started.must_include,
        set_aside=started.set_aside,
        dealt=started.hands,
        result=None,
        played=0,
        exchanged=(),
    )


def evolve(state: RoundState, event: Event) -> RoundState:
    """Fold one event into the state. Holds no rules: events say what happened."""
    evolved: RoundState = EVOLVE[type(event)](state, event)
    return evolved


def replay(events: Sequence[Event]) -> RoundState:
    """The state after a whole list of events, the first being :class:`RoundStarted`."""
    first = events[0]
    if not isinstance(first, RoundStarted):
        raise ValueError("a round's events begin with RoundStarted")
    state = initial_state(first)
    for event in events[1:]:
        state = evolve(state, event)
    return state


def _evolve_started(state: RoundState | None, event: RoundStarted) -> RoundState:
    return initial_state(event)


def _evolve_given(state: RoundState, event: CardsGiven) -> RoundState:
    hands = list(state.hands)
    hands[event.giver] &= ~event.cards
    hands[event.receiver] |= event.cards
    new_cards = list(state.new_cards)
    new_cards[event.giver] &= ~event.cards
    new_cards[event.receiver] |= event.cards
    if event.automatic:
        pending = (*state.pending, Pending(event.receiver, event.giver, event.cards.bit_count()))
        moves = state.moves
    else:
        pending = tuple(p for p in state.pending if p.giver != event.giver)
        moves = state.moves + 1
    return with_changes(
        state,
        {
            I_HANDS: tuple(hands),
            I_NEW: tuple(new_cards),
            I_PENDING: pending,
            I_MOVES: moves,
            I_EXCHANGED: (*state.exchanged, event),
        },
    )


def _evolve_play_started(state: RoundState, event: PlayStarted) -> RoundState:
    return with_changes(state, {I_PHASE: RoundPhase.PLAY, I_TO_ACT: event.leader})


def _evolve_played(state: RoundState, event: CardsPlayed) -> RoundState:
    seat = event.seat
    cards = event.cards
    values: list[Any] = list(state)
    hands = list(state.hands)
    hands[seat] &= ~cards
    values[I_HANDS] = tuple(hands)
    values[I_PLAYED] = state.played | cards
    # combos.set_rank(cards), inlined: one call less per play.
    rank = ((cards & -cards).bit_length() - 1) >> 2
    if cards & ~RANK_MASKS[rank]:
        rank = -1
    if rank >= 0 and rank == state.run_rank and state.top:
        values[I_RUN_COUNT] = state.run_count + cards.bit_count()
    else:
        values[I_RUN_COUNT] = cards.bit_count() if rank >= 0 else 0
    values[I_RUN_RANK] = rank
    if not state.top:
        values[I_TRICK_LEADER] = seat
    values[I_TOP] = cards
    values[I_TOP_SEAT] = seat
    values[I_TRICK_VERSION] = event.trick_version
    values[I_MOVES] = state.moves + 1
    values[I_TO_ACT] = event.next_to_act
    values[I_SAME] = event.same_or_nothing
    values[I_MUST_INCLUDE] = 0
    if state.new_cards[seat]:
        new_cards = list(state.new_cards)
        new_cards[seat] = 0
        values[I_NEW] = tuple(new_cards)
    return tuple_new(RoundState, values)


def _evolve_passed(state: RoundState, event: Passed) -> RoundState:
    values: list[Any] = list(state)
    values[I_MOVES] = state.moves + 1
    if state.options.sit_out:
        values[I_SAT_OUT] = state.sat_out | 1 << event.seat
    values[I_TO_ACT] = event.next_to_act
    values[I_SAME] = False
    return make_state(values)


def _evolve_closed(state: RoundState, event: TrickClosed) -> RoundState:
    values: list[Any] = list(state)
    values[I_TOP] = 0
    values[I_TOP_SEAT] = NOBODY
    values[I_TRICK_LEADER] = NOBODY
    values[I_TRICK_VERSION] = event.trick_version
    values[I_SAT_OUT] = 0
    values[I_RUN_RANK] = -1
    values[I_RUN_COUNT] = 0
    values[I_SAME] = False
    values[I_TO_ACT] = event.leader
    return make_state(values)


def _evolve_revolution(state: RoundState, event: RevolutionChanged) -> RoundState:
    return with_changes(state, {I_REVOLUTION: event.active})


def _evolve_out(state: RoundState, event: PlayerWentOut) -> RoundState:
    changes: dict[int, object] = {I_FINISHED: (*state.finished, event.seat)}
    if event.penalised:
        changes[I_PENALISED] = (*state.penalised, event.seat)
    return with_changes(state, changes)


def _evolve_ended(state: RoundState, event: RoundEnded) -> RoundState:
    return with_changes(
        state, {I_PHASE: RoundPhase.OVER, I_TO_ACT: NOBODY, I_RESULT: event, I_SAME: False}
    )


def _evolve_timed_out(state: RoundState, event: TimedOut) -> RoundState:
    return state


#: The handler of each event type.
EVOLVE: dict[type, Callable[[Any, Any], RoundState]] = {
    RoundStarted: _evolve_started,
    CardsGiven: _evolve_given,
    PlayStarted: _evolve_play_started,
    CardsPlayed: _evolve_played,
    Passed: _evolve_passed,
    TrickClosed: _evolve_closed,
    RevolutionChanged: _evolve_revolution,
    PlayerWentOut: _evolve_out,
    RoundEnded: _evolve_ended,
    TimedOut: _evolve_timed_out,
}
