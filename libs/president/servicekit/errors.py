"""Refusals as the use cases raise them: a code, a stable reason and a sentence.

A refused call gets a :class:`Code` that fits (the canonical codes of
``google.rpc.Code``, which gRPC and Connect both speak), a ``reason`` that is a
stable machine-readable code (the rules codes of conformance/FORMAT.md, or the
service's own such as TABLE_NOT_FOUND), and a message in words a person
understands. A refusal that says when to try again (rate limits) carries the
seconds in its metadata (:data:`RETRY_AFTER`).

Nothing here speaks a wire protocol: the entrypoints turn a refusal into a gRPC
status (:mod:`president.servicekit.grpc_errors`), a Connect error or a message
(:func:`to_refusal`).
"""

from __future__ import annotations

import enum

from president.game.v1 import game_pb2 as gpb
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import OptionError

#: The ErrorInfo metadata key of the seconds a refused client should wait before trying again.
RETRY_AFTER = "retry_after_seconds"


class Code(enum.Enum):
    """Why a call was refused: the canonical codes (``google.rpc.Code``; the names are
    gRPC's, and Connect's in lower case)."""

    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


#: The one table from a rules code to its status code: ABORTED for a play that lost a
#: race; a code not named here is FAILED_PRECONDITION.
STATUS_OF_CODE = {
    ErrorCode.STALE: Code.ABORTED,
    ErrorCode.NOT_YOUR_TURN: Code.FAILED_PRECONDITION,
    ErrorCode.WRONG_PHASE: Code.FAILED_PRECONDITION,
    ErrorCode.SAT_OUT: Code.FAILED_PRECONDITION,
    ErrorCode.MUST_PLAY: Code.FAILED_PRECONDITION,
    ErrorCode.WRONG_GIVE: Code.INVALID_ARGUMENT,
    ErrorCode.NOT_IN_HAND: Code.INVALID_ARGUMENT,
    ErrorCode.INVALID_COMBINATION: Code.INVALID_ARGUMENT,
    ErrorCode.MUST_INCLUDE: Code.INVALID_ARGUMENT,
    ErrorCode.SAME_OR_NOTHING: Code.INVALID_ARGUMENT,
    ErrorCode.WRONG_COUNT: Code.INVALID_ARGUMENT,
    ErrorCode.TOO_LOW: Code.INVALID_ARGUMENT,
    ErrorCode.SEAT_TAKEN: Code.FAILED_PRECONDITION,
    ErrorCode.ALREADY_SEATED: Code.ALREADY_EXISTS,
    ErrorCode.ALREADY_LEFT: Code.FAILED_PRECONDITION,
    ErrorCode.NO_SUCH_SEAT: Code.INVALID_ARGUMENT,
    ErrorCode.INVALID_PLAYER: Code.INVALID_ARGUMENT,
    ErrorCode.BAD_DEAL: Code.INTERNAL,
    ErrorCode.LEFT_THIS_GAME: Code.PERMISSION_DENIED,
    ErrorCode.NOT_ENOUGH_PLAYERS: Code.FAILED_PRECONDITION,
    ErrorCode.ALREADY_HOST: Code.FAILED_PRECONDITION,
    ErrorCode.HOST_MUST_BE_HUMAN: Code.FAILED_PRECONDITION,
    ErrorCode.SEAT_MUTED: Code.PERMISSION_DENIED,
    ErrorCode.CANNOT_MUTE: Code.FAILED_PRECONDITION,
}


#: The longest sentence a refusal carries: one that quotes a huge input is cut, so its
#: status stays within gRPC's 16 KiB limit on trailers (beyond it the caller got
#: RESOURCE_EXHAUSTED "received metadata size exceeds hard limit" instead of the refusal).
MAX_SENTENCE = 500


def sentence(message: str) -> str:
    """The refusal's sentence as sent (at most :data:`MAX_SENTENCE` characters)."""
    return message if len(message) <= MAX_SENTENCE else message[: MAX_SENTENCE - 1] + "…"


#: Why a stream ended because its server is draining (UNAVAILABLE, reason SERVER_DRAINING):
#: the client reconnects and resumes.
DRAINING = "this server is restarting: reconnect and resume from the last version you saw"


class ServiceError(Exception):
    """A refusal with a status code, a stable reason and a sentence."""

    def __init__(
        self,
        status: Code,
        reason: str,
        message: str,
        metadata: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.metadata = metadata or {}


def denied(reason: str, message: str) -> ServiceError:
    """A PERMISSION_DENIED refusal."""
    return ServiceError(Code.PERMISSION_DENIED, reason, message)


def read_only() -> ServiceError:
    """READ_ONLY: the caller's account holds no seat at the table (the table service's
    answer to a seat command, and the gateway's to a preview: one sentence for both)."""
    return denied(
        "READ_ONLY",
        "you hold no seat at this table (or no longer): you may watch it, join a seat to play",
    )


def store_unavailable() -> ServiceError:
    """The store could not be reached (the database restarting): the same command, sent
    again with its command id, runs once when it is back."""
    return ServiceError(
        Code.UNAVAILABLE,
        "STORE_UNAVAILABLE",
        "the table's database cannot be reached right now: send the same command again shortly",
    )


def from_domain(error: Exception) -> ServiceError:
    """The service error of a rules rejection or an option error."""
    if isinstance(error, ServiceError):
        return error
    if isinstance(error, Rejected):
        status = STATUS_OF_CODE.get(error.code, Code.FAILED_PRECONDITION)
        return ServiceError(status, error.code.value, error.reason)
    if isinstance(error, OptionError):
        return ServiceError(Code.INVALID_ARGUMENT, "INVALID_OPTIONS", str(error))
    raise error


def to_refusal(error: ServiceError) -> gpb.Refusal:
    """A refusal as a message, for a command answered on a stream."""
    return gpb.Refusal(
        code=error.status.name,
        reason=error.reason,
        message=sentence(error.message),
        metadata=error.metadata,
    )


def from_refusal(message: gpb.Refusal) -> ServiceError:
    """The refusal a call would have raised, from its message."""
    status = Code.__members__.get(message.code, Code.UNKNOWN)
    return ServiceError(status, message.reason, message.message, dict(message.metadata))
