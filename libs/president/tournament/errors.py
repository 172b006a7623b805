"""Why a tournament command was refused: a stable reason and a sentence. Nothing changed."""

from __future__ import annotations

from enum import StrEnum


class Refusal(StrEnum):
    """The machine-readable reasons of a refused tournament command."""

    NO_SUCH_TOURNAMENT = "NO_SUCH_TOURNAMENT"
    TOURNAMENT_EXISTS = "TOURNAMENT_EXISTS"
    BAD_SETTINGS = "BAD_SETTINGS"
    NOT_HOST = "NOT_HOST"
    NOT_SERVER = "NOT_SERVER"
    NOT_YET_OPEN = "NOT_YET_OPEN"
    ENTRY_CLOSED = "ENTRY_CLOSED"
    TOURNAMENT_FULL = "TOURNAMENT_FULL"
    TOURNAMENT_STARTED = "TOURNAMENT_STARTED"
    TOURNAMENT_OVER = "TOURNAMENT_OVER"
    ALREADY_ENTERED = "ALREADY_ENTERED"
    NOT_ENTERED = "NOT_ENTERED"
    GUESTS_NOT_ALLOWED = "GUESTS_NOT_ALLOWED"
    NOT_INVITED = "NOT_INVITED"
    NOT_STARTED = "NOT_STARTED"
    TOO_EARLY = "TOO_EARLY"
    NOT_ENOUGH_ENTRANTS = "NOT_ENOUGH_ENTRANTS"
    WRONG_ROUND = "WRONG_ROUND"
    ROUND_UNDER_WAY = "ROUND_UNDER_WAY"
    BAD_COMMITMENT = "BAD_COMMITMENT"
    BAD_SEATING = "BAD_SEATING"
    UNKNOWN_TABLE = "UNKNOWN_TABLE"
    RESULT_RECORDED = "RESULT_RECORDED"
    BAD_RESULT = "BAD_RESULT"
    RESULTS_MISSING = "RESULTS_MISSING"
    ROUNDS_REMAIN = "ROUNDS_REMAIN"


class TournamentRefused(Exception):
    """A command the tournament refuses: ``reason`` for machines, ``sentence`` for people."""

    def __init__(self, reason: Refusal, sentence: str) -> None:
        super().__init__(f"{reason}: {sentence}")
        self.reason = reason
        self.sentence = sentence
