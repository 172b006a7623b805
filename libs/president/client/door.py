"""Watching a table at an audience replica's spectators' HTTP door.

The door (``PRESIDENT_AUDIENCE_HTTP_PORT``,
:mod:`president.services.gateway.api.audience_http`) speaks Connect over
HTTP/1.1; this reads it with connectrpc's own client, binary protobuf. Use
it (binary protobuf or JSON) for a crowd of watchers (a stream costs the door a share of a socket
write, against a gRPC write at a gateway); a seat watches at the players'
gateway.

::

    async for change in watch_at_door(door, client.token, table_id):
        ...

``door`` is the replica's ``host:PRESIDENT_AUDIENCE_HTTP_PORT`` (no door unless that
is set). It needs ``connectrpc``: ``pip install 'president-client[door]'``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
from connectrpc.client import ConnectClient
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from google.rpc import error_details_pb2

from president.client.errors import GatewayError
from president.gateway.v1 import gateway_pb2 as pb

WATCH = MethodInfo(
    name="Watch",
    service_name="president.gateway.v1.GatewayService",
    input=pb.WatchRequest,
    output=pb.WatchResponse,
    idempotency_level=IdempotencyLevel.UNKNOWN,
    stream_type=StreamType.SERVER_STREAM,
)


def door_error(error: ConnectError) -> GatewayError:
    """A Connect refusal as the gateway client raises it: status, reason and sentence."""
    reason = ""
    for detail in error.details:
        if detail.type_name == error_details_pb2.ErrorInfo.DESCRIPTOR.full_name:
            reason = error_details_pb2.ErrorInfo.FromString(detail.message_bytes).reason
    name = "CANCELLED" if error.code.name == "CANCELED" else error.code.name
    code = grpc.StatusCode[name]
    return GatewayError(code, reason, error.message)


async def watch_at_door(
    address: str, token: str, table_id: str, from_version: int = 0, *, json: bool = False
) -> AsyncIterator[pb.WatchResponse]:
    """The table as a spectator sees it from the door at ``address`` (``host:port``): a
    snapshot then every change, or the changes after ``from_version`` (from long past, the
    view now marked ``skipped``), in binary protobuf (``json``: Connect's JSON, as a
    browser reads it). A refusal raises :class:`GatewayError`."""
    url = address if "://" in address else f"http://{address}"
    codec = google_protobuf_json_codec() if json else google_protobuf_binary_codec()
    async with ConnectClient(
        url, codec=codec, send_compression=None, accept_compression=()
    ) as client:
        stream = client.execute_server_stream(
            request=pb.WatchRequest(table_id=table_id, from_version=from_version),
            method=WATCH,
            headers={"authorization": f"Bearer {token}"},
        )
        try:
            async for change in stream:
                yield change
        except ConnectError as error:
            raise door_error(error) from None
