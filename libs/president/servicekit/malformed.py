"""Bytes that are not a valid message of the method are refused INVALID_ARGUMENT
(MALFORMED_REQUEST), not UNKNOWN with a Python class name: :class:`MalformedRequests`.

grpc parses each request before the servicer runs and answers a parse failure
as UNKNOWN, naming the exception's class. The interceptor parses instead,
turning a failure into a marker that the method's wrapper refuses.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from president.servicekit.errors import Code, ServiceError
from president.servicekit.grpc_errors import abort

Context = grpc.aio.ServicerContext[Any, Any]


class _Malformed:
    """What a request that could not be parsed becomes."""


MALFORMED = _Malformed()


def malformed_request() -> ServiceError:
    """The refusal of bytes that are not a message of the method."""
    return ServiceError(
        Code.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
        "the request is not a valid protobuf message of this method",
    )


def _parsing(deserialize: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserialize is None:
        return None

    def parse(data: bytes) -> Any:
        try:
            return deserialize(data)
        except Exception:
            return MALFORMED

    return parse


async def _checked(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """The requests; an unparsable one raises the refusal where the handler reads it (a
    handler that reads in a task of its own passes it on: aborting from that task would
    leave the call open)."""
    async for request in requests:
        if request is MALFORMED:
            raise malformed_request()
        yield request


class MalformedRequests(grpc.aio.ServerInterceptor):
    """Refuses unparsable requests INVALID_ARGUMENT (MALFORMED_REQUEST), on every method."""

    async def intercept_service(  # handlers are untyped in grpc's stubs
        self, continuation: Any, handler_call_details: Any
    ) -> Any:
        handler: Any = await continuation(handler_call_details)
        if handler is None:
            return handler
        parse = _parsing(handler.request_deserializer)
        serialize = handler.response_serializer
        if handler.unary_unary is not None:
            unary_inner: Any = handler.unary_unary

            async def unary(request: Any, context: Context) -> Any:
                if request is MALFORMED:
                    await abort(context, malformed_request())
                return await unary_inner(request, context)

            return grpc.unary_unary_rpc_method_handler(
                unary, request_deserializer=parse, response_serializer=serialize
            )
        if handler.unary_stream is not None:
            out_inner: Any = handler.unary_stream

            async def unary_stream(request: Any, context: Context) -> AsyncIterator[Any]:
                if request is MALFORMED:
                    await abort(context, malformed_request())
                async for item in out_inner(request, context):
                    yield item

            return grpc.unary_stream_rpc_method_handler(
                unary_stream, request_deserializer=parse, response_serializer=serialize
            )
        if handler.stream_stream is not None:
            both_inner: Any = handler.stream_stream

            async def stream_stream(requests: Any, context: Context) -> AsyncIterator[Any]:
                try:
                    async for item in both_inner(_checked(requests), context):
                        yield item
                except ServiceError as error:  # the handler let the refusal through
                    await abort(context, error)

            return grpc.stream_stream_rpc_method_handler(
                stream_stream, request_deserializer=parse, response_serializer=serialize
            )
        if handler.stream_unary is not None:
            in_inner: Any = handler.stream_unary

            async def stream_unary(requests: Any, context: Context) -> Any:
                try:
                    return await in_inner(_checked(requests), context)
                except ServiceError as error:  # the handler let the refusal through
                    await abort(context, error)

            return grpc.stream_unary_rpc_method_handler(
                stream_unary, request_deserializer=parse, response_serializer=serialize
            )
        return handler
