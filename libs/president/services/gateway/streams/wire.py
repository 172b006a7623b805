"""The gateway's changes as bytes on the wire: serialized once, framed, passed through.

A change goes to every watcher of a table, so its ``WatchResponse`` is
serialized once per seat (:meth:`Entry.watch_response
<president.services.gateway.streams.entries.Entry.watch_response>`), every field once,
and shared by every stream of that seat. Framing it is exact, because a
repeated field's element on the wire is its tag, its varint length and the
element's bytes:

- a ``SessionResponse`` carrying it is the ``changes`` tag and length before
  it (:func:`session_change`), byte for byte what ``SerializeToString`` makes;
- several such ``SessionResponse`` (or batched ``WatchResponse``,
  :func:`batched_change`) joined are one message whose repeated fields hold
  all their elements, in order. Only repeated fields are joined this way: a
  singular field sent twice is merged by some protobuf libraries and
  replaced by others (protobufjs, under ``@grpc/proto-loader``).

:class:`PreSerialized` lets the gateway's streaming handlers yield such
bytes; only the gateway's server installs it.
"""

from __future__ import annotations

from typing import Any

import grpc

from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.services.gateway.streams.receipts import receipt


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _tag(message: Any, field: str) -> bytes:
    """The tag of a length-delimited field on the wire: its number and wire type 2."""
    return _varint(message.DESCRIPTOR.fields_by_name[field].number << 3 | 2)


_SESSION_CHANGES = _tag(pb.SessionResponse, "changes")
_WATCH_CHANGES = _tag(pb.WatchResponse, "changes")


def session_change(change: bytes) -> bytes:
    """A serialized ``WatchResponse`` as a serialized ``SessionResponse`` carrying it.

    Serialized messages of one type concatenate into one message whose
    repeated fields hold all their elements, so a session sends several
    changes (and results) by joining their bytes.
    """
    return _SESSION_CHANGES + _varint(len(change)) + change


def batched_change(change: bytes) -> bytes:
    """A serialized ``WatchResponse`` as a serialized ``WatchResponse`` whose ``changes``
    hold it: several of them joined are one batched message (``WatchRequest.batched``)."""
    return _WATCH_CHANGES + _varint(len(change)) + change


def session_snapshot(
    version: int,
    view: gpb.TableView,
    now_unix_ms: int,
    envelope: epb.EventEnvelope | None = None,
) -> bytes:
    """The view that starts a fresh Session stream, as a serialized ``SessionResponse``,
    with the server's clock now (a snapshot may be of a change made long ago) and the
    receipt of ``envelope``, the event at ``version``, when given."""
    out = pb.SessionResponse()
    change = out.changes.add(version=version, snapshot=True)
    change.view.CopyFrom(view)
    change.view.server_now_unix_ms = now_unix_ms
    if envelope is not None:
        receipt(change, envelope)
    return out.SerializeToString()


class PreSerialized(grpc.aio.ServerInterceptor):
    """Lets a streaming handler yield messages it serialized itself (``bytes``).

    A server that sends one message to many streams (the gateway's changes)
    builds its bytes once; gRPC would otherwise serialize it again per stream.
    Anything else is serialized as usual.
    """

    async def intercept_service(  # handlers are untyped in grpc's stubs
        self, continuation: Any, handler_call_details: Any
    ) -> Any:
        handler: Any = await continuation(handler_call_details)
        if handler is None or handler.response_serializer is None:
            return handler
        if handler.unary_stream is None and handler.stream_stream is None:
            return handler
        serialize = handler.response_serializer

        def passing_bytes(message: Any) -> bytes:
            return message if isinstance(message, bytes) else serialize(message)

        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                handler.unary_stream,
                request_deserializer=handler.request_deserializer,
                response_serializer=passing_bytes,
            )
        return grpc.stream_stream_rpc_method_handler(
            handler.stream_stream,
            request_deserializer=handler.request_deserializer,
            response_serializer=passing_bytes,
        )
