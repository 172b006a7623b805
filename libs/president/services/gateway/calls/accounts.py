"""The gateway's account calls: forwarded to the players service, revocations kept at once.

CreateGuest, LogIn and Refresh need no token. Register, LogOut and
LogOutEverywhere pass the caller's bearer token on (the players service
checks it itself); WhoAmI is answered here, from the verified identity (an
external identity has no account in the players service). A session logged
out through this replica is refused here at once; the other replicas learn
it from the players service's NATS message.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from president.gateway.v1 import gateway_pb2 as pb
from president.players.v1 import players_pb2 as ppb
from president.servicekit.errors import Code, ServiceError
from president.servicekit.identity import EXTERNAL, GUEST, Identity, identity_message
from president.services.gateway.identity.auth import Verifier
from president.services.gateway.upstream.ports import PlayersPort


class Accounts:
    """The account calls of the public API."""

    def __init__(
        self,
        players: PlayersPort,
        verifier: Verifier,
        access_ttl_seconds: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._players = players
        self._verifier = verifier
        self._ttl = access_ttl_seconds
        self._clock = clock

    async def create_guest(self, request: ppb.CreateGuestRequest) -> ppb.CreateGuestResponse:
        """A new guest."""
        response: ppb.CreateGuestResponse = await self._players.call("CreateGuest", request)
        return response

    async def log_in(self, request: ppb.LogInRequest) -> ppb.LogInResponse:
        """A new session."""
        response: ppb.LogInResponse = await self._players.call("LogIn", request)
        return response

    async def refresh(self, request: ppb.RefreshRequest) -> ppb.RefreshResponse:
        """New tokens for a refresh token."""
        response: ppb.RefreshResponse = await self._players.call("Refresh", request)
        return response

    async def register(self, token: str, request: ppb.RegisterRequest) -> ppb.RegisterResponse:
        """A named account; a guest caller's account gets the name (keeping its id)."""
        if token and not request.upgrade_access_token:
            try:
                caller: Identity | None = self._verifier.verify(token)
            except ServiceError:
                caller = None  # registering needs no identity: a bad one is ignored
            if caller is not None and caller.kind == GUEST:
                upgraded = ppb.RegisterRequest()
                upgraded.CopyFrom(request)
                upgraded.upgrade_access_token = token
                request = upgraded
        response: ppb.RegisterResponse = await self._players.call("Register", request)
        return response

    async def log_out(self, identity: Identity, token: str) -> ppb.LogOutResponse:
        """End the caller's session (refused here at once)."""
        _ours(identity)
        response: ppb.LogOutResponse = await self._players.call(
            "LogOut", ppb.LogOutRequest(access_token=token)
        )
        self._verifier.revocations.revoke(identity.session_id, int(self._clock()) + self._ttl)
        return response

    async def log_out_everywhere(
        self, identity: Identity, token: str
    ) -> ppb.LogOutEverywhereResponse:
        """End every session of the caller's account."""
        _ours(identity)
        response: ppb.LogOutEverywhereResponse = await self._players.call(
            "LogOutEverywhere", ppb.LogOutEverywhereRequest(access_token=token)
        )
        self._verifier.revocations.revoke(identity.session_id, int(self._clock()) + self._ttl)
        return response

    @staticmethod
    def who_am_i(identity: Identity, _request: pb.WhoAmIRequest) -> ppb.WhoAmIResponse:
        """Who the caller's token names."""
        return ppb.WhoAmIResponse(identity=identity_message(identity))


def _ours(identity: Identity) -> None:
    """FAILED_PRECONDITION for a trusted issuer's identity: its sessions are not ours."""
    if identity.kind == EXTERNAL:
        raise ServiceError(
            Code.FAILED_PRECONDITION,
            "EXTERNAL_IDENTITY",
            "this identity comes from your club's identity provider: log out there",
        )
