"""The events of a round: what happened, in the past tense, as the store keeps it."""

from __future__ import annotations

from typing import NamedTuple

from president.rules.options import Options


class RoundStarted(NamedTuple):
    """A round was dealt: the hands as dealt, before any exchange."""

    options: Options
    round_no: int
    players: tuple[int, ...]
    hands: tuple[int, ...]
    set_aside: int
    previous_standings: tuple[int, ...]
    scores: tuple[int, ...]
    leader: int
    must_include: int


class CardsGiven(NamedTuple):
    """Cards changed hands in the exchange: automatically, or a free return."""

    giver: int
    receiver: int
    cards: int
    automatic: bool


class PlayStarted(NamedTuple):
    """Every return is in (or there was no exchange); ``leader`` opens (-1: anyone)."""

    leader: int


class CardsPlayed(NamedTuple):
    """An accepted play; ``next_to_act`` is -1 when nobody has the turn."""

    seat: int
    cards: int
    trick_version: int
    next_to_act: int
    skipped: tuple[int, ...]
    same_or_nothing: bool


class Passed(NamedTuple):
    """An accepted pass."""

    seat: int
    next_to_act: int
    skipped: tuple[int, ...]


class TrickClosed(NamedTuple):
    """The trick was won by ``winner``; ``leader`` opens the next (-1: anyone)."""

    trick_version: int
    winner: int
    leader: int


class RevolutionChanged(NamedTuple):
    """Four of a kind reversed the order (``active``) or restored it."""

    active: bool


class PlayerWentOut(NamedTuple):
    """``seat`` emptied their hand; ``penalised`` when it was with 2s (finish_with_two)."""

    seat: int
    penalised: bool


class RoundEnded(NamedTuple):
    """Only one player holds cards: the places, points and whether the game ended."""

    standings: tuple[int, ...]
    points: tuple[int, ...]
    totals: tuple[int, ...]
    game_over: bool
    winners: tuple[int, ...]


class TimedOut(NamedTuple):
    """The timer ran out; the events that follow are what the server did for ``seat``."""

    seat: int


Event = (
    RoundStarted
    | CardsGiven
    | PlayStarted
    | CardsPlayed
    | Passed
    | TrickClosed
    | RevolutionChanged
    | PlayerWentOut
    | RoundEnded
    | TimedOut
)
