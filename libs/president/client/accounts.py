"""The account calls of the Python client: who the client is, and keeping its tokens fresh.

:class:`AccountCalls` is a part of :class:`~president.client.gateway.GatewayClient`:
``create_guest``, ``register``, ``log_in``, ``log_in_guest``, ``refresh``,
``log_out``, ``log_out_everywhere`` and ``who_am_i``. The client keeps the
tokens each returns, and refreshes the access token before a call once it
is close to expiring (:data:`REFRESH_MARGIN`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from google.protobuf.message import Message

from president.gateway.v1 import gateway_pb2 as pb
from president.players.v1 import players_pb2 as ppb

#: A client refreshes its access token when it has less than this long to live (seconds),
#: or half its lifetime for a token that lives less than twice as long.
REFRESH_MARGIN = 30.0


class AccountCalls:
    """Who the client is: its account's tokens, and the calls that get and end them."""

    #: The access token sent with every call.
    token: str
    #: The refresh token (used once each time: the client keeps the newest).
    refresh_token: str
    #: When the access token expires (Unix seconds; 0: unknown, never refreshed early).
    expires_at: int
    #: A guest's device secret (log in again with ``log_in_guest``).
    device_secret: str
    #: The account id (the player id every table records).
    player_id: str
    display_name: str
    _refreshing: asyncio.Lock
    #: When the access token is refreshed before a call (0: never).
    _refresh_at: float

    def _start_identity(self, token: str, refresh_token: str, player_id: str) -> None:
        self.token = token
        self.refresh_token = refresh_token
        self.expires_at = 0
        self.device_secret = ""
        self.player_id = player_id
        self.display_name = ""
        self._refreshing = asyncio.Lock()
        self._refresh_at = 0.0

    async def _call(self, method: str, request: Message, timeout: float = 30.0) -> Any:
        """One call with the current token (the client's transport)."""
        raise NotImplementedError

    async def _unary(self, method: str, request: Message, timeout: float = 30.0) -> Any:
        """One call, the token refreshed first if it is about to expire."""
        raise NotImplementedError

    async def _fresh(self) -> None:
        """Refresh the access token first if it expires soon (:data:`REFRESH_MARGIN`)."""
        if not self.refresh_token or not self._refresh_at or time.time() < self._refresh_at:
            return
        async with self._refreshing:
            if time.time() >= self._refresh_at:
                await self.refresh()

    # -- who you are ------------------------------------------------------------------
    def _keep(self, credentials: ppb.Credentials) -> ppb.Credentials:
        self.token = credentials.access_token
        self.refresh_token = credentials.refresh_token
        self.expires_at = credentials.access_expires_at
        lifetime = self.expires_at - time.time()
        self._refresh_at = time.time() + max(lifetime - REFRESH_MARGIN, lifetime / 2)
        self.player_id = credentials.identity.account_id
        self.display_name = credentials.identity.display_name
        if credentials.device_secret:
            self.device_secret = credentials.device_secret
        return credentials

    async def create_guest(self, display_name: str) -> ppb.Credentials:
        """Become a new guest (the tokens and the device secret are kept)."""
        created: ppb.CreateGuestResponse = await self._call(
            "CreateGuest", ppb.CreateGuestRequest(display_name=display_name)
        )
        return self._keep(created.credentials)

    async def register(self, name: str, password: str, display_name: str = "") -> ppb.Credentials:
        """A named account (a guest client's own account gets the name, keeping its id)."""
        registered: ppb.RegisterResponse = await self._call(
            "Register",
            ppb.RegisterRequest(name=name, password=password, display_name=display_name),
        )
        return self._keep(registered.credentials)

    async def log_in(self, name: str, password: str) -> ppb.Credentials:
        """Log in to a named account."""
        done: ppb.LogInResponse = await self._call(
            "LogIn", ppb.LogInRequest(name=name, password=password)
        )
        return self._keep(done.credentials)

    async def log_in_guest(self, guest_id: str, device_secret: str) -> ppb.Credentials:
        """Log in again as a guest, with its device secret."""
        done: ppb.LogInResponse = await self._call(
            "LogIn", ppb.LogInRequest(guest_id=guest_id, device_secret=device_secret)
        )
        self.device_secret = device_secret
        return self._keep(done.credentials)

    async def refresh(self) -> ppb.Credentials:
        """New tokens for the kept refresh token (which then stops working)."""
        done: ppb.RefreshResponse = await self._call(
            "Refresh", ppb.RefreshRequest(refresh_token=self.refresh_token)
        )
        return self._keep(done.credentials)

    async def log_out(self) -> int:
        """End this session (its tokens stop working everywhere); forget the tokens."""
        done: ppb.LogOutResponse = await self._call("LogOut", pb.LogOutRequest())
        self.token = self.refresh_token = ""
        return done.sessions_revoked

    async def log_out_everywhere(self) -> int:
        """End every session of this account; forget the tokens."""
        done: ppb.LogOutEverywhereResponse = await self._call(
            "LogOutEverywhere", pb.LogOutEverywhereRequest()
        )
        self.token = self.refresh_token = ""
        return done.sessions_revoked

    async def who_am_i(self) -> ppb.Identity:
        """Who the access token names."""
        found: ppb.WhoAmIResponse = await self._unary("WhoAmI", pb.WhoAmIRequest())
        return found.identity

    async def _identity(self, display_name: str) -> None:
        """Become a guest named ``display_name`` unless the client has an identity."""
        if not self.token:
            await self.create_guest(display_name)
