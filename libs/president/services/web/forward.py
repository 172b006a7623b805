"""The gateway's API as Connect endpoints: every call forwarded to the gateway, unchanged.

Each method of ``president.gateway.v1.GatewayService`` (from the same
protos) becomes an endpoint of ``connectrpc``'s ASGI application, which
speaks Connect (JSON and binary) and gRPC-Web (uvicorn serves it over HTTP/1.1). An
endpoint sends the request to the gateway's native gRPC with the caller's
``authorization`` header (the identity token) as metadata, the table named in
the request's ``table_id`` as a native client names it, so the gateway checks
the same token, the same rights and builds the same per-seat view a native
client gets. With ``PRESIDENT_EDGE_SECRET`` (the gateway's too) it names the
browser's address, so the gateway's limits per address count browsers, not
the edge (behind proxies of its own, uvicorn takes the address from
``X-Forwarded-For`` sent by ``PRESIDENT_WEB_TRUSTED_PROXIES``, by default none).
The account calls (CreateGuest, LogIn, Refresh, ...) pass the same way,
without a token where they need none; its
refusal goes back with the same code, sentence and ``google.rpc.ErrorInfo``
detail (the stable reason). The bidirectional ``Session`` stays native-only.
Unary calls and streams go on separate connections, and each stream takes a
slot of the edge's stream limits before it is forwarded
(:mod:`president.services.web.upstream`); over a limit it is refused as the
gateway refuses, RESOURCE_EXHAUSTED with the reason.
When the edge drains (:meth:`GatewayForwarder.drain`), every open stream ends
at once with UNAVAILABLE (``SERVER_DRAINING``): a well-formed end the browser
reads as "reconnect and resume from the last version", not a cut connection.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import ExitStack
from typing import Any

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message
from google.rpc import status_pb2

from president.gateway.v1 import gateway_pb2
from president.servicekit.connect_errors import (
    connect_refusal,
    error_info_detail,
    readable_detail,
)
from president.servicekit.errors import DRAINING, ServiceError
from president.servicekit.metrics import observe_call
from president.servicekit.peers import EDGE_SECRET, FORWARDED_PEER
from president.services.web.malformed import compressions, parsing_codecs
from president.services.web.upstream import Upstream, identity_key, peer_key

SERVICE = gateway_pb2.DESCRIPTOR.services_by_name["GatewayService"]
#: Bidirectional streams need HTTP/2 end to end, which browsers' fetch does not give.
NATIVE_ONLY = frozenset({"Session"})
#: The request headers passed on to the gateway: the bearer (identity) token. The table is
#: named in the request body (``table_id``), not in a header.
FORWARDED_HEADERS = ("authorization",)
STATUS_DETAILS = "grpc-status-details-bin"
UNREACHABLE = "the game server is not reachable right now; try again in a moment"

Forwarded = Callable[[Message, RequestContext[Any, Any]], Any]


def _code(status: grpc.StatusCode) -> Code:
    """The Connect code of a gRPC status (the same list; Connect spells CANCELED so)."""
    return Code.CANCELED if status == grpc.StatusCode.CANCELLED else Code[status.name]


def refusal(error: grpc.aio.AioRpcError) -> ConnectError:
    """The gateway's refusal as the browser gets it: code, sentence and every detail."""
    details: list[ErrorDetail] = []
    for key, value in error.trailing_metadata() or ():
        if key == STATUS_DETAILS and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            details = [readable_detail(item.type_url, item.value) for item in status.details]
    code = error.code()
    if code == grpc.StatusCode.UNAVAILABLE and not details:
        return ConnectError(Code.UNAVAILABLE, UNREACHABLE)
    return ConnectError(_code(code), error.details() or "", details)


def _metadata(ctx: RequestContext[Any, Any], edge_secret: str) -> tuple[tuple[str, str], ...]:
    """The caller's token and, with the edge's secret, the browser's address (for the
    gateway's limits per address: :mod:`president.servicekit.peers`)."""
    headers = ctx.request_headers
    passed = tuple((name, value) for name in FORWARDED_HEADERS if (value := headers.get(name)))
    browser = (ctx.client_address or "").rpartition(":")[0]
    if not (edge_secret and browser):
        return passed
    return (*passed, (FORWARDED_PEER, browser), (EDGE_SECRET, edge_secret))


def _timeout(ctx: RequestContext[Any, Any]) -> float | None:
    remaining = ctx.timeout_ms
    return None if remaining is None else max(remaining, 0.0) / 1000.0


class GatewayForwarder:
    """The endpoints: unary calls on the upstream's unary channel, streams on its pool."""

    def __init__(self, upstream: Upstream, edge_secret: str = "") -> None:
        self._upstream = upstream
        self._edge_secret = edge_secret
        self._open: set[Any] = set()  # the gateway streams under way
        self.draining = False

    def drain(self) -> None:
        """End every open stream now (UNAVAILABLE, SERVER_DRAINING) and refuse new ones."""
        self.draining = True
        for stream in list(self._open):
            stream.cancel()

    def endpoints(self) -> dict[str, Any]:
        """URL path to endpoint, for every method a browser can call."""
        out: dict[str, Any] = {}
        for method in SERVICE.methods:
            if method.name in NATIVE_ONLY:
                continue
            path = f"/{SERVICE.full_name}/{method.name}"
            info = _method_info(method)
            if method.server_streaming:
                out[path] = Endpoint.server_stream(info, self._stream(path, method))
            else:
                out[path] = Endpoint.unary(info, self._unary(path, method))
        return out

    def _unary(self, path: str, method: MethodDescriptor) -> Forwarded:
        call = self._upstream.unary.unary_unary(
            path,
            request_serializer=_serialize,
            response_deserializer=_message_class(method.output_type).FromString,
        )
        name = method.name

        async def forward(request: Message, ctx: RequestContext[Any, Any]) -> Message:
            started = time.perf_counter()
            code = "OK"
            try:
                response: Message = await call(
                    request, metadata=_metadata(ctx, self._edge_secret), timeout=_timeout(ctx)
                )
                return response
            except grpc.aio.AioRpcError as error:
                code = error.code().name
                raise refusal(error) from None
            finally:
                observe_call("web", name, code, time.perf_counter() - started)

        return forward

    def _stream(self, path: str, method: MethodDescriptor) -> Forwarded:
        calls = [
            channel.unary_stream(
                path,
                request_serializer=_serialize,
                response_deserializer=_message_class(method.output_type).FromString,
            )
            for channel in self._upstream.streams
        ]
        name = method.name
        upstream = self._upstream

        async def forward(
            request: Message, ctx: RequestContext[Any, Any]
        ) -> AsyncIterator[Message]:
            started = time.perf_counter()
            code = "OK"
            if self.draining:
                raise _draining()
            identity = identity_key(ctx.request_headers.get("authorization") or "")
            with ExitStack() as held:
                try:
                    index = held.enter_context(
                        upstream.holding(identity, peer_key(ctx.client_address or ""))
                    )
                except ServiceError as error:
                    observe_call("web", name, "RESOURCE_EXHAUSTED", time.perf_counter() - started)
                    raise connect_refusal(error) from None
                stream = calls[index](
                    request, metadata=_metadata(ctx, self._edge_secret), timeout=_timeout(ctx)
                )
                self._open.add(stream)
                try:
                    async for item in stream:
                        yield item
                except (grpc.aio.AioRpcError, asyncio.CancelledError) as error:
                    if self.draining:
                        code = "UNAVAILABLE"
                        raise _draining() from None
                    if isinstance(error, asyncio.CancelledError):
                        raise
                    code = error.code().name
                    raise refusal(error) from None
                finally:
                    self._open.discard(stream)
                    stream.cancel()  # the browser went away: the gateway stops its watch too
                    observe_call("web", name, code, time.perf_counter() - started)

        return forward


def _draining() -> ConnectError:
    return ConnectError(Code.UNAVAILABLE, DRAINING, [error_info_detail("SERVER_DRAINING")])


def _serialize(message: Message) -> bytes:
    return message.SerializeToString()


def _message_class(descriptor: Any) -> type[Message]:
    cls: type[Message] = message_factory.GetMessageClass(descriptor)
    return cls


def _method_info(method: MethodDescriptor) -> MethodInfo[Any, Any]:
    return MethodInfo(
        name=method.name,
        service_name=SERVICE.full_name,
        input=_message_class(method.input_type),
        output=_message_class(method.output_type),
        idempotency_level=IdempotencyLevel.UNKNOWN,  # POST only: no cached GETs of a seat's view
        stream_type=StreamType.SERVER_STREAM if method.server_streaming else StreamType.UNARY,
    )


class GatewayApplication(ConnectASGIApplication[GatewayForwarder]):
    """The Connect and gRPC-Web application of the GatewayService, mounted at its path."""

    @property
    def path(self) -> str:
        return f"/{SERVICE.full_name}"


def connect_application(
    forwarder: GatewayForwarder, read_max_bytes: int, codecs: Any
) -> GatewayApplication:
    """The ASGI application serving ``forwarder``'s endpoints with Google protobuf codecs."""
    endpoints: Callable[[GatewayForwarder], Mapping[str, Any]] = GatewayForwarder.endpoints
    return GatewayApplication(
        service=forwarder,
        endpoints=endpoints,
        read_max_bytes=read_max_bytes,
        codecs=parsing_codecs(codecs),
        compressions=compressions(),
    )
