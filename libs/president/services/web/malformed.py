"""Bytes that are not a message of the method are refused as native gRPC refuses them:
INVALID_ARGUMENT, reason MALFORMED_REQUEST, the same sentence (never the parser's own words,
nor an INTERNAL for a message marked compressed without an encoding).

``connectrpc`` answers a parse failure INVALID_ARGUMENT with the parser's text ("maximum
recursion depth exceeded") and no reason, and an enveloped message flagged compressed
with no encoding named INTERNAL. :class:`ParsingCodec` wraps each codec so a failure is
the native refusal; :class:`NameTheEncoding` names :data:`UNNAMED` as the encoding of an
enveloped request that names none, and that encoding refuses to decompress, so a flagged
message gets the same refusal. A message not flagged compressed is never decompressed:
the name changes nothing for it.
"""

from __future__ import annotations

from typing import Any

from connectrpc.compression import Compression
from connectrpc.compression.gzip import GzipCompression
from starlette.types import ASGIApp, Receive, Scope, Send

from president.servicekit.connect_errors import connect_refusal
from president.servicekit.malformed import malformed_request

#: The encoding named for an enveloped request that names none.
UNNAMED = "x-president-unnamed"
#: The encoding header of each enveloped protocol, by content type prefix.
_ENCODING_HEADERS = (
    (b"application/grpc-web", b"grpc-encoding"),
    (b"application/grpc", b"grpc-encoding"),
    (b"application/connect+", b"connect-content-encoding"),
)
UNNAMED_MESSAGE = (
    "the request message is marked compressed, but the request names no encoding "
    "(grpc-encoding or connect-content-encoding)"
)


class ParsingCodec:
    """A codec whose failure to read a request is the native MALFORMED_REQUEST refusal."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def name(self) -> str:
        name: str = self._inner.name()
        return name

    def encode(self, message: Any) -> bytes:
        data: bytes = self._inner.encode(message)
        return data

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        try:
            return self._inner.decode(data, message_class)
        except Exception:  # any parser failure (RecursionError too) is the one refusal
            raise connect_refusal(malformed_request()) from None


class UnnamedEncoding:
    """The encoding of a request that names none: a message flagged compressed is refused."""

    def name(self) -> str:
        return UNNAMED

    def compress(self, data: bytes | bytearray | memoryview) -> bytes:
        return bytes(data)  # never chosen for an answer: no client accepts this name

    def decompress(
        self, data: bytes | bytearray | memoryview, read_max_bytes: int | None = None
    ) -> bytes:
        refusal = malformed_request()
        refusal.message = UNNAMED_MESSAGE
        raise connect_refusal(refusal)


def parsing_codecs(codecs: Any) -> list[ParsingCodec]:
    """``codecs``, each wrapped in :class:`ParsingCodec`."""
    return [ParsingCodec(codec) for codec in codecs]


def compressions() -> list[Compression]:
    """The encodings the application takes: ``connectrpc``'s default, gzip (identity it
    always takes), and :class:`UnnamedEncoding`."""
    return [GzipCompression(), UnnamedEncoding()]


class NameTheEncoding:
    """Names :data:`UNNAMED` as the encoding of an enveloped request that names none."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = scope["headers"]
            content_type = next((v for k, v in headers if k == b"content-type"), b"")
            header = next(
                (name for prefix, name in _ENCODING_HEADERS if content_type.startswith(prefix)),
                None,
            )
            if header is not None:
                named = next((v for k, v in headers if k == header), b"")
                if named in (b"", b"identity"):
                    kept = [(k, v) for k, v in headers if k != header]
                    scope = {**scope, "headers": [*kept, (header, UNNAMED.encode())]}
        await self._app(scope, receive, send)
