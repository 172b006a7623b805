"""Connect's errors, one way for the web edge and the audience replicas' HTTP door.

A Connect error carries each detail as ``{"type", "value", "debug"}``: ``value`` is
the message's protobuf bytes in base64, which a client without the proto cannot
read; ``debug`` is the same message as JSON. Every detail built here (the edge's
own refusals, the gateway's refusals it forwards, the door's end of stream) gets
its ``debug``, so ``curl`` shows ``{"reason": "TABLE_NOT_FOUND", "domain": ...,
"metadata": {...}}`` as it is. :class:`ReadableDetail` is connectrpc's
``ErrorDetail`` that knows google.rpc's error details (connectrpc writes
``debug`` only for a detail whose message it can decode); :func:`detail_json`
writes one for a body built by hand.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from functools import cache
from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from google.protobuf import descriptor_pb2
from google.rpc import error_details_pb2
from protobuf import Message as WireMessage
from protobuf import Registry, merge_from_binary, message_to_json_value
from protobuf._file_registry import create_file_registry
from protobuf.wkt import Any as WireAny
from protobuf.wkt.google.protobuf import descriptor_pb, duration_pb

from president.servicekit.errors import ServiceError
from president.servicekit.grpc_errors import DOMAIN, rich_status

TYPE_PREFIX = "type.googleapis.com/"


def _json_names(messages: Any) -> None:
    """Fill each field's JSON name (``retry_delay``: ``retryDelay``), which the descriptor
    compiled into the Python module leaves empty."""
    for message in messages:
        for field in message.field:
            head, *rest = field.name.split("_")
            field.json_name = head + "".join(part.capitalize() for part in rest)
        _json_names(message.nested_type)


@cache
def rpc_details() -> Registry:
    """google.rpc's error details (ErrorInfo, RetryInfo, ...) for connectrpc's runtime."""
    compiled = descriptor_pb2.FileDescriptorProto.FromString(
        error_details_pb2.DESCRIPTOR.serialized_pb
    )
    _json_names(compiled.message_type)
    proto = descriptor_pb.FileDescriptorProto()
    merge_from_binary(proto, compiled.SerializeToString())
    dependencies = {"google/protobuf/duration.proto": duration_pb.desc()}
    return create_file_registry(proto, dependencies.get)


class ReadableDetail(ErrorDetail):
    """A detail whose ``debug`` JSON connectrpc writes: google.rpc's details are decoded."""

    def value(self, desc_or_registry: Any = None) -> WireMessage | None:  # type: ignore[override]
        return super().value(desc_or_registry or rpc_details())


def readable_detail(type_url: str, value: bytes) -> ReadableDetail:
    """One detail of a google.rpc.Status (its Any's type URL and bytes)."""
    return ReadableDetail(WireAny(type_url=type_url, value=value))


def error_info_detail(reason: str, metadata: Mapping[str, str] | None = None) -> ReadableDetail:
    """An ErrorInfo of ours (``reason`` in our domain, with ``metadata``)."""
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata or {})
    return readable_detail(TYPE_PREFIX + info.DESCRIPTOR.full_name, info.SerializeToString())


def connect_refusal(error: ServiceError) -> ConnectError:
    """A refusal of ours as Connect carries it: code, sentence, its ErrorInfo and, with a
    retry hint, RetryInfo (the details native gRPC carries)."""
    status = rich_status(error)
    details = [readable_detail(item.type_url, item.value) for item in status.details]
    return ConnectError(Code[error.status.name], status.message, details)


def detail_json(detail: ErrorDetail) -> dict[str, Any]:
    """A detail as Connect writes it in JSON: type, unpadded base64 value, and debug."""
    written: dict[str, Any] = {
        "type": detail.type_name,
        "value": base64.b64encode(detail.message_bytes).decode().rstrip("="),
    }
    decoded = detail.value()
    if decoded is not None:
        written["debug"] = message_to_json_value(decoded)
    return written


def error_json(
    code: str, message: str, reason: str, metadata: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A Connect JSON error of ours: ``code`` (Connect's name, e.g. ``permission_denied``),
    the sentence, and the ErrorInfo with ``reason`` (value and debug)."""
    detail = error_info_detail(reason, metadata)
    return {"code": code, "message": message, "details": [detail_json(detail)]}
