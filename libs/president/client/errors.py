"""How the gateway refuses a call: :class:`GatewayError`, which refusals a client resends,
and how it waits out a rate limit (:func:`honouring_retry_hints`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Self, TypeVar

import grpc
from google.rpc import error_details_pb2, status_pb2

T = TypeVar("T")
RESUMABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
#: Reasons of a failure that says nothing about the command, only that the
#: connection was lost (none: the gateway went away), so it is sent again.
CONNECTION_LOST = ("", "UPSTREAM_UNAVAILABLE", "SESSION_ENDED")
#: Reasons of a server that could not run the command now (its database or dealer
#: away): nothing of it was kept, so it is sent again with the same command id.
TRY_AGAIN = ("STORE_UNAVAILABLE", "DEALER_UNAVAILABLE")
#: The ErrorInfo metadata key of the seconds to wait (the gateway also sends a RetryInfo).
RETRY_AFTER = "retry_after_seconds"
#: A refused call is waited out and sent again this many times at most ...
RETRY_ATTEMPTS = 3
#: ... when the server asks for no longer than this (seconds) each time.
LONGEST_RETRY_WAIT = 30.0


class GatewayError(Exception):
    """A refused call: the gRPC status, the ErrorInfo reason and the sentence."""

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code.name} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        #: The seconds the server asked to wait before trying again (None: it did not).
        self.retry_after = retry_after

    @classmethod
    def of(cls, error: grpc.aio.AioRpcError) -> GatewayError:
        """The error of a failed call, with its ErrorInfo reason and its RetryInfo's delay
        when it carries them."""
        reason = ""
        retry_after: float | None = None
        for key, value in error.trailing_metadata() or ():
            if key == "grpc-status-details-bin" and isinstance(value, bytes):
                status = status_pb2.Status.FromString(value)
                for detail in status.details:
                    if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                        info = error_details_pb2.ErrorInfo()
                        detail.Unpack(info)
                        reason = info.reason
                    elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                        retry = error_details_pb2.RetryInfo()
                        detail.Unpack(retry)
                        retry_after = retry.retry_delay.ToNanoseconds() / 1e9
        return cls(error.code(), reason, error.details() or "", retry_after)

    @classmethod
    def refused(cls, code: str, reason: str, message: str, metadata: dict[str, str]) -> Self:
        """The error of a command refused on a Session stream (its result's refusal)."""
        try:
            retry_after = float(metadata[RETRY_AFTER]) if RETRY_AFTER in metadata else None
        except ValueError:
            retry_after = None
        status = getattr(grpc.StatusCode, code, grpc.StatusCode.UNKNOWN)
        return cls(status, reason, message, retry_after)


async def raising_gateway_error(call: Awaitable[T]) -> T:
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        raise GatewayError.of(error) from None


def connection_lost(error: GatewayError) -> bool:
    """Whether ``error`` says only that the connection was lost or the server could not run
    the command now, so the command is sent again (with the same command id)."""
    return error.code in RESUMABLE and error.reason in (*CONNECTION_LOST, *TRY_AGAIN)


#: The gateway's own rate limit: the one refusal the client waits out by itself.
RATE_LIMITED = "RATE_LIMITED"


def waits_out(error: GatewayError) -> bool:
    """Whether ``error`` is the gateway's rate limit (``RATE_LIMITED``), asking for a wait short
    enough to honour: such a call was refused before it ran, so sending it again is safe. A
    table's own rule with a wait (``REACTION_RATE``) is the caller's to decide: a reaction sent
    seconds late means nothing."""
    return (
        error.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        and error.reason == RATE_LIMITED
        and error.retry_after is not None
        and 0 <= error.retry_after <= LONGEST_RETRY_WAIT
    )


async def honouring_retry_hints(
    send: Callable[[], Awaitable[T]], attempts: int = RETRY_ATTEMPTS
) -> T:
    """``send()``'s answer; a refusal that asks to wait (:func:`waits_out`) is waited out and
    the call sent again, up to ``attempts`` times, then raised."""
    for _ in range(attempts):
        try:
            return await send()
        except GatewayError as error:
            if not waits_out(error):
                raise
            await asyncio.sleep(error.retry_after or 0.0)
    return await send()
