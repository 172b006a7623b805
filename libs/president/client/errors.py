"""How the gateway refuses a call: :class:`GatewayError`, and which refusals a client resends."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

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


class GatewayError(Exception):
    """A refused call: the gRPC status, the ErrorInfo reason and the sentence."""

    def __init__(self, code: grpc.StatusCode, reason: str, message: str) -> None:
        super().__init__(f"{code.name} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message

    @classmethod
    def of(cls, error: grpc.aio.AioRpcError) -> GatewayError:
        """The error of a failed call, with its ErrorInfo reason when it carries one."""
        reason = ""
        for key, value in error.trailing_metadata() or ():
            if key == "grpc-status-details-bin" and isinstance(value, bytes):
                status = status_pb2.Status.FromString(value)
                for detail in status.details:
                    if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                        info = error_details_pb2.ErrorInfo()
                        detail.Unpack(info)
                        reason = info.reason
        return cls(error.code(), reason, error.details() or "")


async def raising_gateway_error(call: Awaitable[T]) -> T:
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        raise GatewayError.of(error) from None


def connection_lost(error: GatewayError) -> bool:
    """Whether ``error`` says only that the connection was lost or the server could not run
    the command now, so the command is sent again (with the same command id)."""
    return error.code in RESUMABLE and error.reason in (*CONNECTION_LOST, *TRY_AGAIN)
