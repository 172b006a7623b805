"""Connect's server stream on the wire, as the spectators' HTTP door speaks it.

The two encodings (``application/connect+proto`` and ``+json``), a message's
envelope, an HTTP/1.1 chunk, the end-of-stream message with its error and
``google.rpc.ErrorInfo``, the one ``WatchRequest`` of a request body, and
``Connect-Timeout-Ms``. No sockets here: bytes in, bytes out
(:mod:`president.services.gateway.api.audience_http` writes them).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.connect_errors import error_json
from president.servicekit.errors import Code, ServiceError

END_STREAM = 0x02


@dataclass(frozen=True)
class Codec:
    """One of Connect's message encodings: the content type, a response's bytes from the
    shared serialized ``WatchResponse``, and the request read."""

    content_type: str
    encode: Callable[[bytes], bytes]
    decode: Callable[[bytes], pb.WatchRequest]


def _json(serialized: bytes) -> bytes:
    return json_format.MessageToJson(pb.WatchResponse.FromString(serialized), indent=None).encode()


def _from_json(data: bytes) -> pb.WatchRequest:
    return json_format.Parse(data, pb.WatchRequest())


PROTO = Codec(
    "application/connect+proto", lambda serialized: serialized, pb.WatchRequest.FromString
)
JSON = Codec("application/connect+json", _json, _from_json)
CODECS = {codec.content_type: codec for codec in (PROTO, JSON)}


def envelope(data: bytes, flags: int = 0) -> bytes:
    """One Connect stream message: flags, big-endian length, the bytes."""
    return struct.pack(">BI", flags, len(data)) + data


def chunk(payload: bytes) -> bytes:
    """``payload`` as one HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def end_of_stream(error: ServiceError | None) -> bytes:
    """The stream's last message (Connect's end-of-stream JSON), then the last chunk."""
    body: dict[str, Any] = {}
    if error is not None:
        body["error"] = error_json(
            connect_code(error.status), error.message, error.reason, error.metadata
        )
    return chunk(envelope(json.dumps(body).encode(), END_STREAM)) + b"0\r\n\r\n"


def connect_code(status: Code) -> str:
    """Connect's name of a status (gRPC's, in lower case; Connect spells CANCELED so)."""
    return "canceled" if status == Code.CANCELLED else status.name.lower()


def read_request(codec: Codec, body: bytes) -> pb.WatchRequest:
    """The one enveloped WatchRequest of a stream's body (INVALID_ARGUMENT otherwise)."""
    if len(body) < 5:
        raise invalid("the request must be one Connect message: 5 bytes of envelope, then it")
    flags, size = struct.unpack(">BI", body[:5])
    if flags & 0x01:
        raise ServiceError(
            Code.UNIMPLEMENTED,
            "COMPRESSION_UNSUPPORTED",
            "send the request uncompressed",
        )
    if size != len(body) - 5:
        raise invalid(f"the envelope says {size} bytes but {len(body) - 5} came")
    try:
        return codec.decode(body[5:])
    except (DecodeError, json_format.ParseError) as error:
        raise invalid(f"the WatchRequest could not be read: {str(error)[:200]}") from None


def invalid(message: str) -> ServiceError:
    return ServiceError(Code.INVALID_ARGUMENT, "MALFORMED_REQUEST", message)


def timeout_seconds(value: str | None) -> float | None:
    """A stream's ``Connect-Timeout-Ms`` in seconds (None: it asked for none)."""
    if value is None:
        return None
    digits = value.strip()
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 10 and int(digits) > 0):
        raise invalid(
            f"Connect-Timeout-Ms must be a whole number of milliseconds from 1 to 10 digits,"
            f" not {value[:20]!r}"
        )
    return int(digits) / 1000


def timed_out(seconds: float) -> ServiceError:
    return ServiceError(
        Code.DEADLINE_EXCEEDED,
        "DEADLINE_EXCEEDED",
        f"the stream ran for the {seconds * 1000:.0f} ms its Connect-Timeout-Ms allowed",
    )
