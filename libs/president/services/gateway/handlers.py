"""The gateway's gRPC servicer: token -> claims, proto in and out, errors -> rich status.

Every refusal becomes its transport error here (:func:`transport_error`):
the gateway's own (:class:`~president.services.gateway.app.Refused`) by
:data:`REFUSED_STATUS`, the rules' and the services' by the service kit's
tables.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
import structlog

from president.gateway.v1 import gateway_pb2 as pb
from president.gateway.v1 import gateway_pb2_grpc
from president.servicekit.errors import ServiceError, abort, from_domain
from president.services.gateway.app import Gateway, Refused
from president.services.gateway.auth import Claims, Tokens
from president.services.gateway.session import DOMAIN_ERRORS, internal, session

T = TypeVar("T")
Context = grpc.aio.ServicerContext[Any, Any]

#: The transport status of each of the gateway's own refusals (:class:`Refused`).
REFUSED_STATUS = {
    "TABLE_EXISTS": grpc.StatusCode.ALREADY_EXISTS,
    "NO_SUCH_SEAT": grpc.StatusCode.INVALID_ARGUMENT,  # as the rules' NO_SUCH_SEAT
    "OWN_SEAT": grpc.StatusCode.FAILED_PRECONDITION,
    "TABLE_FULL": grpc.StatusCode.FAILED_PRECONDITION,
    "SEAT_TAKEN": grpc.StatusCode.ABORTED,
}


def transport_error(error: Exception) -> ServiceError:
    """The status, reason and sentence a client receives for a refusal."""
    if isinstance(error, Refused):
        return ServiceError(REFUSED_STATUS[error.reason], error.reason, error.message)
    return from_domain(error)


class GatewayServicer(gateway_pb2_grpc.GatewayServiceServicer):
    """The public API: each call is checked and handed to :class:`Gateway`."""

    def __init__(self, gateway: Gateway, tokens: Tokens) -> None:
        self._gateway = gateway
        self._tokens = tokens
        self._log = structlog.get_logger().bind(service="gateway")

    async def _open(self, context: Context, run: Callable[[], Awaitable[T]]) -> T:
        """A call that needs no token."""
        try:
            return await run()
        except DOMAIN_ERRORS as error:
            await abort(context, transport_error(error))
        except Exception as error:
            self._log.exception("call failed", error=repr(error))
            await abort(context, internal())

    async def _authed(self, context: Context, run: Callable[[Claims], Awaitable[T]]) -> T:
        """A call that acts with the bearer token's claims."""
        try:
            claims = self._tokens.from_metadata(context.invocation_metadata())
            return await run(claims)
        except DOMAIN_ERRORS as error:
            await abort(context, transport_error(error))
        except Exception as error:
            self._log.exception("call failed", error=repr(error))
            await abort(context, internal())

    async def CreateTable(
        self, request: pb.CreateTableRequest, context: Context
    ) -> pb.CreateTableResponse:
        return await self._open(context, lambda: self._gateway.create_table(request))

    async def ListTables(
        self, request: pb.ListTablesRequest, context: Context
    ) -> pb.ListTablesResponse:
        return await self._open(context, self._gateway.list_tables)

    async def JoinTable(
        self, request: pb.JoinTableRequest, context: Context
    ) -> pb.JoinTableResponse:
        return await self._open(context, lambda: self._gateway.join_table(request))

    async def Spectate(self, request: pb.SpectateRequest, context: Context) -> pb.SpectateResponse:
        return await self._open(context, lambda: self._gateway.spectate(request))

    async def AddBot(self, request: pb.AddBotRequest, context: Context) -> pb.AddBotResponse:
        return await self._authed(context, lambda claims: self._gateway.add_bot(claims, request))

    async def RemoveSeat(
        self, request: pb.RemoveSeatRequest, context: Context
    ) -> pb.RemoveSeatResponse:
        return await self._authed(
            context, lambda claims: self._gateway.remove_seat(claims, request)
        )

    async def StartGame(
        self, request: pb.StartGameRequest, context: Context
    ) -> pb.StartGameResponse:
        return await self._authed(context, lambda claims: self._gateway.start_game(claims, request))

    async def Play(self, request: pb.PlayRequest, context: Context) -> pb.PlayResponse:
        return await self._authed(context, lambda claims: self._gateway.play(claims, request))

    async def Pass(self, request: pb.PassRequest, context: Context) -> pb.PassResponse:
        return await self._authed(context, lambda claims: self._gateway.pass_(claims, request))

    async def ReturnCards(
        self, request: pb.ReturnCardsRequest, context: Context
    ) -> pb.ReturnCardsResponse:
        return await self._authed(
            context, lambda claims: self._gateway.return_cards(claims, request)
        )

    async def React(self, request: pb.ReactRequest, context: Context) -> pb.ReactResponse:
        return await self._authed(context, lambda claims: self._gateway.react(claims, request))

    async def Leave(self, request: pb.LeaveRequest, context: Context) -> pb.LeaveResponse:
        return await self._authed(context, lambda claims: self._gateway.leave(claims, request))

    async def HostAction(
        self, request: pb.HostActionRequest, context: Context
    ) -> pb.HostActionResponse:
        return await self._authed(
            context, lambda claims: self._gateway.host_action(claims, request)
        )

    async def GetTable(self, request: pb.GetTableRequest, context: Context) -> pb.GetTableResponse:
        return await self._authed(context, self._gateway.get_table)

    async def GetScores(
        self, request: pb.GetScoresRequest, context: Context
    ) -> pb.GetScoresResponse:
        return await self._authed(context, self._gateway.get_scores)

    async def CheckDeal(
        self, request: pb.CheckDealRequest, context: Context
    ) -> pb.CheckDealResponse:
        return await self._authed(context, lambda claims: self._gateway.check_deal(claims, request))

    def Watch(self, request: pb.WatchRequest, context: Context) -> AsyncIterator[pb.WatchResponse]:
        return self._streamed(context, lambda claims: self._gateway.watch(claims, request))

    async def Session(  # type: ignore[override]  # changes come serialized (wire.PreSerialized)
        self, requests: AsyncIterator[pb.SessionRequest], context: Context
    ) -> AsyncIterator[pb.SessionResponse | bytes]:
        # Take the first request before anything can refuse the call: a refusal
        # that races the client's first write reaches it as INTERNAL instead of
        # its own status (grpc.aio, grpc/grpc#36066).
        first = await anext(requests, None)
        stream = self._streamed(
            context, lambda claims: session(self._gateway, claims, first, requests, transport_error)
        )
        async for item in stream:
            yield item

    async def _streamed(
        self, context: Context, open_stream: Callable[[Claims], AsyncIterator[T]]
    ) -> AsyncIterator[T]:
        """A stream that acts with the bearer token's claims; its failure ends the call."""
        try:
            claims = self._tokens.from_metadata(context.invocation_metadata())
            async for item in open_stream(claims):
                yield item
        except DOMAIN_ERRORS as error:
            await abort(context, transport_error(error))
        except Exception as error:
            self._log.exception("stream failed", error=repr(error))
            await abort(context, internal())
