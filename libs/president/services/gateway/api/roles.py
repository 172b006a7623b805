"""A gateway replica's role: the players' door, or an audience replica that serves
spectators only (``PRESIDENT_GATEWAY_ROLE``, a setting of
:class:`~president.servicekit.config.gateway.GatewaySettings`).

An audience replica is the same gateway, fed the same way (NATS, the table
service's store reads), that refuses every call that acts at a table
(:data:`PLAYERS_ONLY`: seats, plays, the Session stream) with
FAILED_PRECONDITION ``AUDIENCE_REPLICA``. Ops put as many of them behind the
spectators' address as an audience needs; the players' replicas never see
those streams, so a crowd never slows a seat (:class:`AudienceOnly`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc

from president.servicekit.errors import Code, ServiceError
from president.servicekit.grpc_errors import abort

#: The GatewayService methods only the players' replicas serve: they act at a table or
#: change a tournament.
PLAYERS_ONLY = frozenset(
    {
        "CreateTable",
        "JoinTable",
        "AddBot",
        "RemoveSeat",
        "StartGame",
        "Play",
        "Pass",
        "ReturnCards",
        "React",
        "SendChat",
        "MuteSeat",
        "Leave",
        "HostAction",
        "HandOverHost",
        "Session",
        "CreateTournament",
        "EnterTournament",
        "WithdrawTournament",
        "InviteToTournament",
        "CancelTournament",
    }
)

Context = grpc.aio.ServicerContext[Any, Any]


def audience_replica() -> ServiceError:
    """The refusal of a table command at an audience replica."""
    return ServiceError(
        Code.FAILED_PRECONDITION,
        "AUDIENCE_REPLICA",
        "this gateway replica serves spectators only: sit, play and open sessions "
        "at the players' gateway",
    )


class AudienceOnly(grpc.aio.ServerInterceptor):
    """Refuses :data:`PLAYERS_ONLY` methods (an audience replica's server installs it)."""

    async def intercept_service(  # handlers are untyped in grpc's stubs
        self, continuation: Any, handler_call_details: Any
    ) -> Any:
        handler: Any = await continuation(handler_call_details)
        method = str(handler_call_details.method).rsplit("/", 1)[-1]
        if handler is None or method not in PLAYERS_ONLY:
            return handler
        if handler.stream_stream is not None:

            async def refuse_stream(_requests: Any, context: Context) -> AsyncIterator[Any]:
                await abort(context, audience_replica())
                yield  # pragma: no cover - abort raises

            return grpc.stream_stream_rpc_method_handler(
                refuse_stream,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )

        async def refuse(_request: Any, context: Context) -> Any:
            await abort(context, audience_replica())

        return grpc.unary_unary_rpc_method_handler(
            refuse,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
