"""Why a command was refused: one code and a sentence.

The codes of moves are those of conformance/FORMAT.md (:data:`MOVE_CODES`);
the table's own commands (seats, the deal, the host's choices) add theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum


class ErrorCode(StrEnum):
    """The rejection codes: moves first, in the order of precedence of FORMAT.md."""

    WRONG_PHASE = "WRONG_PHASE"
    WRONG_GIVE = "WRONG_GIVE"
    STALE = "STALE"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    SAT_OUT = "SAT_OUT"
    NOT_IN_HAND = "NOT_IN_HAND"
    INVALID_COMBINATION = "INVALID_COMBINATION"
    MUST_PLAY = "MUST_PLAY"
    MUST_INCLUDE = "MUST_INCLUDE"
    SAME_OR_NOTHING = "SAME_OR_NOTHING"
    WRONG_COUNT = "WRONG_COUNT"
    TOO_LOW = "TOO_LOW"
    # The table's own commands: seats, the deal.
    NO_SUCH_SEAT = "NO_SUCH_SEAT"
    SEAT_TAKEN = "SEAT_TAKEN"
    ALREADY_SEATED = "ALREADY_SEATED"
    ALREADY_LEFT = "ALREADY_LEFT"
    INVALID_PLAYER = "INVALID_PLAYER"
    BAD_DEAL = "BAD_DEAL"
    #: A player who left during the game asks for a seat again (rulebook 000).
    LEFT_THIS_GAME = "LEFT_THIS_GAME"
    #: A game is started with fewer (or more) seated players than its rules allow.
    NOT_ENOUGH_PLAYERS = "NOT_ENOUGH_PLAYERS"
    #: The host hands the role to the player who has it already.
    ALREADY_HOST = "ALREADY_HOST"
    #: The host role goes to a bot, or to a player who left.
    HOST_MUST_BE_HUMAN = "HOST_MUST_BE_HUMAN"
    #: The host muted the person who writes to the chat.
    SEAT_MUTED = "SEAT_MUTED"
    #: The host mutes a seat where no person sits, or their own.
    CANNOT_MUTE = "CANNOT_MUTE"


#: The codes of FORMAT.md: the refusals of a move in a round.
MOVE_CODES = frozenset(
    {
        ErrorCode.WRONG_PHASE,
        ErrorCode.WRONG_GIVE,
        ErrorCode.STALE,
        ErrorCode.NOT_YOUR_TURN,
        ErrorCode.SAT_OUT,
        ErrorCode.NOT_IN_HAND,
        ErrorCode.INVALID_COMBINATION,
        ErrorCode.MUST_PLAY,
        ErrorCode.MUST_INCLUDE,
        ErrorCode.SAME_OR_NOTHING,
        ErrorCode.WRONG_COUNT,
        ErrorCode.TOO_LOW,
    }
)


class Rejected(Exception):
    """A command the rules refuse: a move, or a table command. Nothing changed.

    The sentence may be given as a function: bots probe many moves, and only
    a rejection someone reads needs its words.
    """

    def __init__(self, code: ErrorCode, reason: str | Callable[[], str]) -> None:
        super().__init__(code)
        self.code = code
        self._reason = reason

    @property
    def reason(self) -> str:
        """The sentence for a person."""
        if not isinstance(self._reason, str):
            self._reason = self._reason()
        return self._reason

    def __str__(self) -> str:
        return f"{self.code}: {self.reason}"


#: The codes that take precedence over NOT_IN_HAND (FORMAT.md's order).
BEFORE_NOT_IN_HAND = frozenset(
    {
        ErrorCode.WRONG_PHASE,
        ErrorCode.WRONG_GIVE,
        ErrorCode.STALE,
        ErrorCode.NOT_YOUR_TURN,
        ErrorCode.SAT_OUT,
    }
)


def duplicate_card_rejection(check: Callable[[], object]) -> Rejected:
    """The rejection of a play or give that names a card twice.

    ``check`` runs the same command with each card once: if it is refused for
    a reason that comes before NOT_IN_HAND (wrong phase, not your turn, ...),
    that reason is reported; otherwise the duplicate is (NOT_IN_HAND).
    """
    try:
        check()
    except Rejected as rejection:
        if rejection.code in BEFORE_NOT_IN_HAND:
            return rejection
    return Rejected(ErrorCode.NOT_IN_HAND, "the same card is named twice")
