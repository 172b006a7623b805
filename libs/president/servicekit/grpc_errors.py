"""Refusals to gRPC's rich error model, and back: the entrypoints' one translation.

A :class:`~president.servicekit.errors.ServiceError` becomes a status with its
code and a ``google.rpc.ErrorInfo`` (reason, domain :data:`DOMAIN`, metadata);
one that says when to try again also carries a ``google.rpc.RetryInfo``. A
downstream service's refusal comes back as the ServiceError it was.
"""

from __future__ import annotations

from typing import Any, NoReturn

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from president.servicekit.errors import RETRY_AFTER, Code, ServiceError, from_domain, sentence

DOMAIN = "president.cards"


def grpc_code(code: Code) -> grpc.StatusCode:
    """gRPC's status code of a refusal's code."""
    return grpc.StatusCode[code.name]


def code_of(status: grpc.StatusCode) -> Code:
    """A refusal's code from gRPC's (OK, never a refusal, reads UNKNOWN)."""
    return Code.__members__.get(status.name, Code.UNKNOWN)


def rich_status(error: ServiceError) -> status_pb2.Status:
    """google.rpc's Status of a refusal: code, sentence, its ErrorInfo and, with a retry
    hint, RetryInfo (what gRPC and Connect both carry)."""
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
    return status_pb2.Status(
        code=error.status.value,
        message=sentence(error.message),
        details=details,
    )


def to_status(error: ServiceError) -> grpc.Status:
    """The rich gRPC status of a refusal (:func:`rich_status`)."""
    return rpc_status.to_status(rich_status(error))


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
        raise ServiceError(
            code_of(error.code()), "UPSTREAM_ERROR", error.details() or "a service failed"
        )
    raise ServiceError(
        code_of(error.code()), info.reason, error.details() or "", dict(info.metadata)
    )
