"""Domain errors to gRPC's rich error model, and back.

A refused call gets a status code that fits and a ``google.rpc.ErrorInfo``
whose ``reason`` is a stable machine-readable code (the rules codes of
conformance/FORMAT.md, or the service's own such as TABLE_NOT_FOUND) and a
message in words a person understands. A refusal that says when to try
again (rate limits) carries the seconds in the ErrorInfo metadata
(:data:`RETRY_AFTER`) and, for clients that read it, a ``google.rpc.RetryInfo``.
"""

from __future__ import annotations

from typing import Any, NoReturn

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from president.game.v1 import game_pb2 as gpb
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import OptionError

DOMAIN = "president.cards"
#: The ErrorInfo metadata key of the seconds a refused client should wait before trying again.
RETRY_AFTER = "retry_after_seconds"

#: The one table from a rules code to its status code: ABORTED for a play that lost a
#: race; a code not named here is FAILED_PRECONDITION.
STATUS_OF_CODE = {
    ErrorCode.STALE: grpc.StatusCode.ABORTED,
    ErrorCode.NOT_YOUR_TURN: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.WRONG_PHASE: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.SAT_OUT: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.MUST_PLAY: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.WRONG_GIVE: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.NOT_IN_HAND: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.INVALID_COMBINATION: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.MUST_INCLUDE: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.SAME_OR_NOTHING: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.WRONG_COUNT: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.TOO_LOW: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.SEAT_TAKEN: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.ALREADY_SEATED: grpc.StatusCode.ALREADY_EXISTS,
    ErrorCode.ALREADY_LEFT: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.NO_SUCH_SEAT: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.INVALID_PLAYER: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.BAD_DEAL: grpc.StatusCode.INTERNAL,
    ErrorCode.LEFT_THIS_GAME: grpc.StatusCode.PERMISSION_DENIED,
    ErrorCode.NOT_ENOUGH_PLAYERS: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.ALREADY_HOST: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.HOST_MUST_BE_HUMAN: grpc.StatusCode.FAILED_PRECONDITION,
}


#: The longest sentence a refusal carries: one that quotes a huge input is cut, so its
#: status stays within gRPC's 16 KiB limit on trailers (beyond it the caller got
#: RESOURCE_EXHAUSTED "received metadata size exceeds hard limit" instead of the refusal).
MAX_SENTENCE = 500


def _sentence(message: str) -> str:
    return message if len(message) <= MAX_SENTENCE else message[: MAX_SENTENCE - 1] + "…"


#: Why a stream ended because its server is draining (UNAVAILABLE, reason SERVER_DRAINING):
#: the client reconnects and resumes.
DRAINING = "this server is restarting: reconnect and resume from the last version you saw"


class ServiceError(Exception):
    """A refusal with a status code, a stable reason and a sentence."""

    def __init__(
        self,
        status: grpc.StatusCode,
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
    return ServiceError(grpc.StatusCode.PERMISSION_DENIED, reason, message)


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
        grpc.StatusCode.UNAVAILABLE,
        "STORE_UNAVAILABLE",
        "the table's database cannot be reached right now: send the same command again shortly",
    )


def from_domain(error: Exception) -> ServiceError:
    """The service error of a rules rejection or an option error."""
    if isinstance(error, ServiceError):
        return error
    if isinstance(error, Rejected):
        status = STATUS_OF_CODE.get(error.code, grpc.StatusCode.FAILED_PRECONDITION)
        return ServiceError(status, error.code.value, error.reason)
    if isinstance(error, OptionError):
        return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTIONS", str(error))
    raise error


def to_status(error: ServiceError) -> grpc.Status:
    """The rich gRPC status carrying an ErrorInfo."""
    info = error_details_pb2.ErrorInfo(reason=error.reason, domain=DOMAIN, metadata=error.metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    details = [detail]
    if RETRY_AFTER in error.metadata:
        delay = duration_pb2.Duration()
        delay.FromNanoseconds(int(float(error.metadata[RETRY_AFTER]) * 1e9))
        retry = any_pb2.Any()
        retry.Pack(error_details_pb2.RetryInfo(retry_delay=delay))
        details.append(retry)
    status = status_pb2.Status(
        code=getattr(code_pb2, error.status.name),
        message=_sentence(error.message),
        details=details,
    )
    return rpc_status.to_status(status)


def to_refusal(error: ServiceError) -> gpb.Refusal:
    """A refusal as a message, for a command answered on a stream."""
    return gpb.Refusal(
        code=error.status.name,
        reason=error.reason,
        message=_sentence(error.message),
        metadata=error.metadata,
    )


def from_refusal(message: gpb.Refusal) -> ServiceError:
    """The refusal a call would have raised, from its message."""
    status = getattr(grpc.StatusCode, message.code, grpc.StatusCode.UNKNOWN)
    return ServiceError(status, message.reason, message.message, dict(message.metadata))


async def abort(context: grpc.aio.ServicerContext[Any, Any], error: Exception) -> NoReturn:
    """End the call with the rich status of ``error`` (domain errors are translated)."""
    await context.abort_with_status(to_status(from_domain(error)))
    raise AssertionError("abort_with_status returned")  # pragma: no cover


def _info_of(status: status_pb2.Status | None) -> error_details_pb2.ErrorInfo | None:
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info
    return None


def error_info(error: grpc.RpcError) -> error_details_pb2.ErrorInfo | None:
    """The ErrorInfo of a failed call, if it carries one."""
    return _info_of(rpc_status.from_call(error))  # type: ignore[arg-type]


async def aio_error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo | None:
    """The ErrorInfo of a failed grpc.aio call, if it carries one."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            return _info_of(status_pb2.Status.FromString(value))
    return None


def reraise_remote(
    error: grpc.aio.AioRpcError, info: error_details_pb2.ErrorInfo | None
) -> NoReturn:
    """Pass a downstream service's refusal on unchanged."""
    if info is None:
        raise ServiceError(error.code(), "UPSTREAM_ERROR", error.details() or "a service failed")
    raise ServiceError(error.code(), info.reason, error.details() or "", dict(info.metadata))
