"""The players gRPC servicer: protos in, :class:`Players` (in a worker thread), protos out.

Hashing a password takes tens of milliseconds of CPU, so every call runs
the use case in a worker thread; refusals become their rich status.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

import grpc
import structlog

from president.players.v1 import players_pb2 as pb
from president.players.v1 import players_pb2_grpc
from president.servicekit.errors import Code, ServiceError
from president.servicekit.grpc_errors import abort
from president.servicekit.identity import identity_message
from president.services.players.app import Issued, Players

T = TypeVar("T")
Context = grpc.aio.ServicerContext[Any, Any]


def credentials(issued: Issued) -> pb.Credentials:
    """Issued tokens as the proto carries them."""
    return pb.Credentials(
        access_token=issued.access_token,
        access_expires_at=issued.identity.expires_at,
        refresh_token=issued.refresh_token,
        refresh_expires_at=issued.refresh_expires_at,
        identity=identity_message(issued.identity),
        device_secret=issued.device_secret,
    )


class PlayersServicer(players_pb2_grpc.PlayersServiceServicer):
    """Accounts, sessions and tokens."""

    def __init__(self, players: Players) -> None:
        self._players = players
        self._log = structlog.get_logger().bind(service="players")

    async def _run(self, context: Context, work: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(work)
        except ServiceError as error:
            await abort(context, error)
        except Exception as error:
            self._log.exception("call failed", error=type(error).__name__)
            await abort(
                context,
                ServiceError(Code.INTERNAL, "INTERNAL", "the players service failed"),
            )

    async def CreateGuest(
        self, request: pb.CreateGuestRequest, context: Context
    ) -> pb.CreateGuestResponse:
        issued = await self._run(context, lambda: self._players.create_guest(request.display_name))
        return pb.CreateGuestResponse(credentials=credentials(issued))

    async def Register(self, request: pb.RegisterRequest, context: Context) -> pb.RegisterResponse:
        issued = await self._run(
            context,
            lambda: self._players.register(
                request.name, request.password, request.display_name, request.upgrade_access_token
            ),
        )
        return pb.RegisterResponse(credentials=credentials(issued))

    async def LogIn(self, request: pb.LogInRequest, context: Context) -> pb.LogInResponse:
        if request.guest_id:
            issued = await self._run(
                context, lambda: self._players.log_in_guest(request.guest_id, request.device_secret)
            )
        else:
            issued = await self._run(
                context, lambda: self._players.log_in(request.name, request.password)
            )
        return pb.LogInResponse(credentials=credentials(issued))

    async def Refresh(self, request: pb.RefreshRequest, context: Context) -> pb.RefreshResponse:
        issued = await self._run(context, lambda: self._players.refresh(request.refresh_token))
        return pb.RefreshResponse(credentials=credentials(issued))

    async def LogOut(self, request: pb.LogOutRequest, context: Context) -> pb.LogOutResponse:
        count = await self._run(context, lambda: self._players.log_out(request.access_token))
        return pb.LogOutResponse(sessions_revoked=count)

    async def LogOutEverywhere(
        self, request: pb.LogOutEverywhereRequest, context: Context
    ) -> pb.LogOutEverywhereResponse:
        count = await self._run(
            context, lambda: self._players.log_out_everywhere(request.access_token)
        )
        return pb.LogOutEverywhereResponse(sessions_revoked=count)

    async def WhoAmI(self, request: pb.WhoAmIRequest, context: Context) -> pb.WhoAmIResponse:
        identity = await self._run(context, lambda: self._players.who_am_i(request.access_token))
        return pb.WhoAmIResponse(identity=identity_message(identity))

    async def ListRevocations(
        self, request: pb.ListRevocationsRequest, context: Context
    ) -> pb.ListRevocationsResponse:
        found = await self._run(context, self._players.revocations)
        return pb.ListRevocationsResponse(
            revocations=[pb.Revocation(session_id=sid, until=until) for sid, until in found]
        )

    async def GetDisplayNames(
        self, request: pb.GetDisplayNamesRequest, context: Context
    ) -> pb.GetDisplayNamesResponse:
        ids = list(request.account_ids)
        found = await self._run(context, lambda: self._players.display_names(ids))
        return pb.GetDisplayNamesResponse(display_names=found)
