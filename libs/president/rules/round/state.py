"""The state of one round: its phases, the immutable tuple and its field indexes.

The hot paths copy the tuple into a list, change a few fields by index
(``I_*``) and build the tuple again without NamedTuple's checks
(:func:`make_state`); :func:`with_changes` does the same for a few fields.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NamedTuple

from president.rules.errors import ErrorCode, Rejected
from president.rules.options import Options
from president.rules.round.events import CardsGiven, RoundEnded

NOBODY = -1


class RoundPhase(StrEnum):
    """Where a round is; the values are the strings the wire and the store carry."""

    EXCHANGE = "exchange"
    PLAY = "play"
    OVER = "over"


class Pending(NamedTuple):
    """A return still owed in the exchange."""

    giver: int
    receiver: int
    size: int


class RoundState(NamedTuple):
    """Everything about one round. Never mutated: every change makes a new one."""

    options: Options
    round_no: int
    players: tuple[int, ...]
    scores: tuple[int, ...]
    previous_standings: tuple[int, ...]
    phase: RoundPhase
    hands: tuple[int, ...]
    to_act: int
    top: int
    top_seat: int
    trick_leader: int
    trick_version: int
    moves: int
    sat_out: int
    run_rank: int
    run_count: int
    same_or_nothing: bool
    revolution: bool
    finished: tuple[int, ...]
    penalised: tuple[int, ...]
    pending: tuple[Pending, ...]
    new_cards: tuple[int, ...]
    must_include: int
    set_aside: int
    dealt: tuple[int, ...]
    result: RoundEnded | None
    played: int = 0
    """Every card played so far this round: public, as each play is."""
    exchanged: tuple[CardsGiven, ...] = ()
    """This round's gives in the exchange, in order (each known to its giver and receiver)."""

    @property
    def seat_count(self) -> int:
        return len(self.hands)

    @property
    def timer_key(self) -> int:
        """What a timer started now expires on: rapid's trick version, else the move count."""
        return self.trick_version if self.options.rapid else self.moves


_INDEX = {name: index for index, name in enumerate(RoundState._fields)}
tuple_new = tuple.__new__


def make_state(values: list[Any]) -> RoundState:
    """The state of these field values, in field order (no checks: the hot path)."""
    return tuple_new(RoundState, values)


def with_changes(state: RoundState, changes: dict[int, object]) -> RoundState:
    """``state`` with the fields at these indexes replaced."""
    values: list[Any] = list(state)
    for index, value in changes.items():
        values[index] = value
    return make_state(values)


I_PHASE = _INDEX["phase"]
I_HANDS = _INDEX["hands"]
I_TO_ACT = _INDEX["to_act"]
I_TOP = _INDEX["top"]
I_TOP_SEAT = _INDEX["top_seat"]
I_TRICK_LEADER = _INDEX["trick_leader"]
I_TRICK_VERSION = _INDEX["trick_version"]
I_MOVES = _INDEX["moves"]
I_SAT_OUT = _INDEX["sat_out"]
I_RUN_RANK = _INDEX["run_rank"]
I_RUN_COUNT = _INDEX["run_count"]
I_SAME = _INDEX["same_or_nothing"]
I_REVOLUTION = _INDEX["revolution"]
I_FINISHED = _INDEX["finished"]
I_PENALISED = _INDEX["penalised"]
I_PENDING = _INDEX["pending"]
I_NEW = _INDEX["new_cards"]
I_MUST_INCLUDE = _INDEX["must_include"]
I_RESULT = _INDEX["result"]
I_PLAYED = _INDEX["played"]
I_EXCHANGED = _INDEX["exchanged"]


def wrong_phase(state: RoundState, what: str) -> Rejected:
    """The refusal of ``what`` (``"play"``, ``"pass"``, ...) in the round's current phase."""
    if state.phase == RoundPhase.EXCHANGE:
        return Rejected(
            ErrorCode.WRONG_PHASE,
            f"you cannot {what} during the exchange: play begins when every return is in",
        )
    if state.phase == RoundPhase.OVER:
        return Rejected(ErrorCode.WRONG_PHASE, "the round is over")
    return Rejected(ErrorCode.WRONG_PHASE, f"you cannot {what} now")
