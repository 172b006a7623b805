"""The gateway's gRPC servicer: token -> identity, proto in and out, errors -> rich status.

Every refusal becomes its transport error here (:func:`transport_error`):
the gateway's own (:class:`~president.services.gateway.calls.refused.Refused`) by
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
from president.players.v1 import players_pb2 as ppb
from president.servicekit.account_keys import account_key
from president.servicekit.errors import Code, ServiceError, from_domain
from president.servicekit.grpc_errors import abort
from president.servicekit.identity import Identity
from president.services.gateway.api.session import DOMAIN_ERRORS, internal, session
from president.services.gateway.calls.accounts import Accounts
from president.services.gateway.calls.app import Gateway
from president.services.gateway.calls.quick_play import QuickPlay
from president.services.gateway.calls.ratings import Ratings
from president.services.gateway.calls.refused import Refused
from president.services.gateway.calls.seats import Seats
from president.services.gateway.calls.tournaments import Tournaments
from president.services.gateway.identity.auth import Verifier, bearer
from president.services.gateway.limits.admission import Admission
from president.standings.v1 import standings_pb2 as st
from president.tournaments.v1 import tournaments_pb2 as tpb

T = TypeVar("T")
Context = grpc.aio.ServicerContext[Any, Any]

#: The transport status of each of the gateway's own refusals (:class:`Refused`).
REFUSED_STATUS = {
    "TABLE_EXISTS": Code.ALREADY_EXISTS,
    "NO_SUCH_SEAT": Code.INVALID_ARGUMENT,  # as the rules' NO_SUCH_SEAT
    "OWN_SEAT": Code.FAILED_PRECONDITION,
    "TABLE_FULL": Code.FAILED_PRECONDITION,
    "SEAT_TAKEN": Code.ABORTED,
}


def transport_error(error: Exception) -> ServiceError:
    """The status, reason and sentence a client receives for a refusal."""
    if isinstance(error, Refused):
        return ServiceError(REFUSED_STATUS[error.reason], error.reason, error.message)
    return from_domain(error)


class GatewayServicer(gateway_pb2_grpc.GatewayServiceServicer):
    """The public API: each call is checked and handed to :class:`Seats` (setting a table
    up), :class:`QuickPlay`, :class:`Gateway` (plays, reads, watching), :class:`Ratings`,
    :class:`Tournaments` or :class:`Accounts` (who you are)."""

    def __init__(
        self,
        gateway: Gateway,
        seats: Seats,
        verifier: Verifier,
        accounts: Accounts,
        ratings: Ratings,
        quick_play: QuickPlay,
        admission: Admission | None = None,
        tournaments: Tournaments | None = None,
    ) -> None:
        self._gateway = gateway
        self._seats = seats
        self._verifier = verifier
        self._accounts = accounts
        self._admission = admission or Admission()
        self._ratings = ratings
        self._quick_play = quick_play
        self._tournaments = tournaments
        self._log = structlog.get_logger().bind(service="gateway")

    async def _open(
        self, context: Context, method: str, run: Callable[[], Awaitable[T]], who: str = ""
    ) -> T:
        """A call that needs no token (counted for ``who``, "" for nobody, and its peer)."""
        try:
            self._admission.call(method, context, who)
            async with self._admission.running(method, context):
                return await run()
        except DOMAIN_ERRORS as error:
            await abort(context, transport_error(error))
        except Exception as error:
            self._log.exception("call failed", error=type(error).__name__)
            await abort(context, internal())

    async def _authed(
        self, context: Context, method: str, run: Callable[[Identity], Awaitable[T]]
    ) -> T:
        """A call that acts with the bearer token's identity (counted for it and its peer)."""
        try:
            identity = self._verifier.from_metadata(context.invocation_metadata())
            self._admission.call(method, context, identity.account_id)
            async with self._admission.running(method, context):
                return await run(identity)
        except DOMAIN_ERRORS as error:
            await abort(context, transport_error(error))
        except Exception as error:
            self._log.exception("call failed", error=type(error).__name__)
            await abort(context, internal())

    async def _with_token(
        self, context: Context, method: str, run: Callable[[Identity, str], Awaitable[T]]
    ) -> T:
        """A call that acts with the identity and passes its token on (to log out)."""
        token = bearer(context.invocation_metadata())
        return await self._authed(context, method, lambda identity: run(identity, token))

    # -- tables and seats -----------------------------------------------------------
    async def CreateTable(
        self, request: pb.CreateTableRequest, context: Context
    ) -> pb.CreateTableResponse:
        return await self._authed(
            context, "CreateTable", lambda who: self._seats.create_table(who, request)
        )

    async def ListTables(
        self, request: pb.ListTablesRequest, context: Context
    ) -> pb.ListTablesResponse:
        return await self._open(context, "ListTables", lambda: self._gateway.list_tables(request))

    async def ListCommitments(
        self, request: pb.ListCommitmentsRequest, context: Context
    ) -> pb.ListCommitmentsResponse:
        return await self._open(
            context, "ListCommitments", lambda: self._gateway.list_commitments(request)
        )

    async def GetOperatorKeys(
        self, request: pb.GetOperatorKeysRequest, context: Context
    ) -> pb.GetOperatorKeysResponse:
        return await self._open(
            context, "GetOperatorKeys", lambda: self._gateway.get_operator_keys(request)
        )

    async def JoinTable(
        self, request: pb.JoinTableRequest, context: Context
    ) -> pb.JoinTableResponse:
        return await self._authed(
            context, "JoinTable", lambda who: self._seats.join_table(who, request)
        )

    async def QuickPlay(
        self, request: pb.QuickPlayRequest, context: Context
    ) -> pb.QuickPlayResponse:
        return await self._authed(
            context, "QuickPlay", lambda who: self._quick_play.quick_play(who, request)
        )

    async def Spectate(self, request: pb.SpectateRequest, context: Context) -> pb.SpectateResponse:
        return await self._authed(
            context, "Spectate", lambda who: self._gateway.spectate(who, request)
        )

    async def AddBot(self, request: pb.AddBotRequest, context: Context) -> pb.AddBotResponse:
        return await self._authed(context, "AddBot", lambda who: self._seats.add_bot(who, request))

    async def RemoveSeat(
        self, request: pb.RemoveSeatRequest, context: Context
    ) -> pb.RemoveSeatResponse:
        return await self._authed(
            context, "RemoveSeat", lambda who: self._seats.remove_seat(who, request)
        )

    async def StartGame(
        self, request: pb.StartGameRequest, context: Context
    ) -> pb.StartGameResponse:
        return await self._authed(
            context, "StartGame", lambda who: self._seats.start_game(who, request)
        )

    async def Play(self, request: pb.PlayRequest, context: Context) -> pb.PlayResponse:
        return await self._authed(context, "Play", lambda who: self._gateway.play(who, request))

    async def Pass(self, request: pb.PassRequest, context: Context) -> pb.PassResponse:
        return await self._authed(context, "Pass", lambda who: self._gateway.pass_(who, request))

    async def ReturnCards(
        self, request: pb.ReturnCardsRequest, context: Context
    ) -> pb.ReturnCardsResponse:
        return await self._authed(
            context, "ReturnCards", lambda who: self._gateway.return_cards(who, request)
        )

    async def React(self, request: pb.ReactRequest, context: Context) -> pb.ReactResponse:
        return await self._authed(context, "React", lambda who: self._gateway.react(who, request))

    async def SendChat(self, request: pb.SendChatRequest, context: Context) -> pb.SendChatResponse:
        return await self._authed(
            context, "SendChat", lambda who: self._gateway.send_chat(who, request)
        )

    async def MuteSeat(self, request: pb.MuteSeatRequest, context: Context) -> pb.MuteSeatResponse:
        return await self._authed(
            context, "MuteSeat", lambda claims: self._seats.mute_seat(claims, request)
        )

    async def Leave(self, request: pb.LeaveRequest, context: Context) -> pb.LeaveResponse:
        return await self._authed(context, "Leave", lambda who: self._gateway.leave(who, request))

    async def HostAction(
        self, request: pb.HostActionRequest, context: Context
    ) -> pb.HostActionResponse:
        return await self._authed(
            context, "HostAction", lambda who: self._gateway.host_action(who, request)
        )

    async def PreviewPlay(
        self, request: pb.PreviewPlayRequest, context: Context
    ) -> pb.PreviewPlayResponse:
        return await self._authed(
            context, "PreviewPlay", lambda claims: self._gateway.preview_play(claims, request)
        )

    async def GetActivity(
        self, request: pb.GetActivityRequest, context: Context
    ) -> pb.GetActivityResponse:
        return await self._authed(
            context, "GetActivity", lambda claims: self._gateway.get_activity(claims, request)
        )

    async def HandOverHost(
        self, request: pb.HandOverHostRequest, context: Context
    ) -> pb.HandOverHostResponse:
        return await self._authed(
            context, "HandOverHost", lambda claims: self._seats.hand_over_host(claims, request)
        )

    async def GetTable(self, request: pb.GetTableRequest, context: Context) -> pb.GetTableResponse:
        return await self._authed(
            context, "GetTable", lambda who: self._gateway.get_table(who, request)
        )

    async def GetScores(
        self, request: pb.GetScoresRequest, context: Context
    ) -> pb.GetScoresResponse:
        return await self._authed(
            context, "GetScores", lambda who: self._gateway.get_scores(who, request)
        )

    async def CheckDeal(
        self, request: pb.CheckDealRequest, context: Context
    ) -> pb.CheckDealResponse:
        return await self._authed(
            context, "CheckDeal", lambda who: self._gateway.check_deal(who, request)
        )

    def Watch(  # type: ignore[override]  # changes come serialized (wire.PreSerialized)
        self, request: pb.WatchRequest, context: Context
    ) -> AsyncIterator[bytes]:
        return self._streamed(
            context,
            "Watch",
            lambda who, _peer: self._gateway.watch(who, request, lambda: self._verifier.check(who)),
        )

    async def Session(  # type: ignore[override]  # changes come serialized (wire.PreSerialized)
        self, requests: AsyncIterator[pb.SessionRequest], context: Context
    ) -> AsyncIterator[pb.SessionResponse | bytes]:
        # Take the first request before anything can refuse the call: a refusal
        # that races the client's first write reaches it as INTERNAL instead of
        # its own status (grpc.aio, grpc/grpc#36066).
        first = await anext(requests, None)
        stream = self._streamed(
            context,
            "Session",
            lambda who, peer: session(
                self._gateway,
                who,
                first,
                requests,
                transport_error,
                lambda: self._verifier.check(who),
                lambda: self._admission.command(peer, who.account_id),
            ),
        )
        async for item in stream:
            yield item

    async def _streamed(
        self,
        context: Context,
        method: str,
        open_stream: Callable[[Identity, str], AsyncIterator[T]],
    ) -> AsyncIterator[T]:
        """A stream opened with the bearer token's identity (which it re-checks: Watch through
        its own check, Session on its queue) from its peer, holding one of their stream
        slots while it is open; its failure ends the call."""
        try:
            identity = self._verifier.from_metadata(context.invocation_metadata())
            self._admission.call(method, context, identity.account_id)
            peer = self._admission.peer(context)
            with self._admission.stream(peer, identity.account_id):
                async for item in open_stream(identity, peer):
                    yield item
        except DOMAIN_ERRORS as error:
            await abort(context, transport_error(error))
        except Exception as error:
            self._log.exception("stream failed", error=type(error).__name__)
            await abort(context, internal())

    # -- accounts ---------------------------------------------------------------------
    async def CreateGuest(
        self, request: ppb.CreateGuestRequest, context: Context
    ) -> ppb.CreateGuestResponse:
        return await self._open(
            context, "CreateGuest", lambda: self._accounts.create_guest(request)
        )

    async def Register(
        self, request: ppb.RegisterRequest, context: Context
    ) -> ppb.RegisterResponse:
        return await self._open(
            context,
            "Register",
            lambda: self._accounts.register(bearer(context.invocation_metadata()), request),
        )

    async def LogIn(self, request: ppb.LogInRequest, context: Context) -> ppb.LogInResponse:
        # Counted per account too (by the players service's own key, so no other spelling of
        # the name escapes it): guessing one account's password is slow from anywhere.
        return await self._open(
            context,
            "LogIn",
            lambda: self._accounts.log_in(request),
            f"name:{account_key(request.name)}" if request.name else request.guest_id,
        )

    async def Refresh(self, request: ppb.RefreshRequest, context: Context) -> ppb.RefreshResponse:
        return await self._open(context, "Refresh", lambda: self._accounts.refresh(request))

    async def LogOut(self, request: pb.LogOutRequest, context: Context) -> ppb.LogOutResponse:
        return await self._with_token(context, "LogOut", self._accounts.log_out)

    async def LogOutEverywhere(
        self, request: pb.LogOutEverywhereRequest, context: Context
    ) -> ppb.LogOutEverywhereResponse:
        return await self._with_token(
            context, "LogOutEverywhere", self._accounts.log_out_everywhere
        )

    async def WhoAmI(self, request: pb.WhoAmIRequest, context: Context) -> ppb.WhoAmIResponse:
        async def answer(identity: Identity) -> ppb.WhoAmIResponse:
            return self._accounts.who_am_i(identity, request)

        return await self._authed(context, "WhoAmI", answer)

    # ---- ratings
    async def GetRatings(
        self, request: pb.GetRatingsRequest, context: Context
    ) -> st.GetRatingsResponse:
        return await self._authed(
            context, "GetRatings", lambda who: self._ratings.get_ratings(who, request)
        )

    async def GetLeaderboard(
        self, request: pb.GetLeaderboardRequest, context: Context
    ) -> pb.GetLeaderboardResponse:
        return await self._authed(
            context, "GetLeaderboard", lambda who: self._ratings.get_leaderboard(who, request)
        )

    async def GetHistory(
        self, request: pb.GetHistoryRequest, context: Context
    ) -> pb.GetHistoryResponse:
        return await self._authed(
            context, "GetHistory", lambda who: self._ratings.get_history(who, request)
        )

    async def GetHeadToHead(
        self, request: pb.GetHeadToHeadRequest, context: Context
    ) -> st.GetHeadToHeadResponse:
        return await self._authed(
            context, "GetHeadToHead", lambda who: self._ratings.get_head_to_head(who, request)
        )

    # ---- tournaments
    @property
    def _events(self) -> Tournaments:
        if self._tournaments is None:
            raise ServiceError(
                Code.UNIMPLEMENTED, "NO_TOURNAMENTS", "this gateway serves no tournaments"
            )
        return self._tournaments

    async def CreateTournament(
        self, request: pb.CreateTournamentRequest, context: Context
    ) -> tpb.CreateTournamentResponse:
        return await self._authed(
            context, "CreateTournament", lambda who: self._events.create(who, request)
        )

    async def ListTournaments(
        self, request: pb.ListTournamentsRequest, context: Context
    ) -> tpb.ListTournamentsResponse:
        return await self._authed(
            context, "ListTournaments", lambda who: self._events.list(who, request)
        )

    async def GetTournament(
        self, request: pb.GetTournamentRequest, context: Context
    ) -> tpb.GetTournamentResponse:
        return await self._authed(
            context, "GetTournament", lambda who: self._events.get(who, request)
        )

    async def EnterTournament(
        self, request: pb.EnterTournamentRequest, context: Context
    ) -> tpb.EnterTournamentResponse:
        return await self._authed(
            context, "EnterTournament", lambda who: self._events.enter(who, request)
        )

    async def WithdrawTournament(
        self, request: pb.WithdrawTournamentRequest, context: Context
    ) -> tpb.WithdrawTournamentResponse:
        return await self._authed(
            context, "WithdrawTournament", lambda who: self._events.withdraw(who, request)
        )

    async def InviteToTournament(
        self, request: pb.InviteToTournamentRequest, context: Context
    ) -> tpb.InviteToTournamentResponse:
        return await self._authed(
            context, "InviteToTournament", lambda who: self._events.invite(who, request)
        )

    async def CancelTournament(
        self, request: pb.CancelTournamentRequest, context: Context
    ) -> tpb.CancelTournamentResponse:
        return await self._authed(
            context, "CancelTournament", lambda who: self._events.cancel(who, request)
        )
