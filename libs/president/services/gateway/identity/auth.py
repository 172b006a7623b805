"""Who is calling: the bearer token verified into an :class:`Identity`, and the refusals of rights.

A token says who you are and nothing about a table: the players service's
access tokens (HS256 on the shared ``PRESIDENT_TOKEN_SECRET``) or a trusted
issuer's JWT (:mod:`president.services.gateway.identity.issuers`). What you may do at
a table is read from the table's state. Clients send the token in the
metadata ``authorization: Bearer <token>``. A missing, forged or expired
token is UNAUTHENTICATED with the reason TOKEN_MISSING, TOKEN_INVALID or
TOKEN_EXPIRED; a revoked session's SESSION_REVOKED; an unknown issuer's
ISSUER_UNTRUSTED. A verified token is kept (the signature is checked once)
but its expiry and revocation are checked on every use.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

import jwt

from president.servicekit.identity import (
    ISSUER,
    MAX_TOKEN_CHARS,
    AccessTokens,
    Identity,
    unauthenticated,
)
from president.services.gateway.identity.issuers import TrustedIssuers
from president.services.gateway.identity.revocations import Revocations

AUTHORIZATION = "authorization"
#: Verified tokens kept, so a player's many calls verify the signature once.
VERIFIED_CACHE = 20_000


def bearer(metadata: Iterable[tuple[str, Any]] | None) -> str:
    """The bearer token in call metadata ("" if none)."""
    for key, value in metadata or ():
        if key != AUTHORIZATION:
            continue
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        scheme, _, rest = text.strip().partition(" ")
        if scheme.lower() != "bearer" or not rest.strip():
            raise unauthenticated(
                "TOKEN_MISSING", "the authorization metadata must read 'Bearer <token>'"
            )
        return rest.strip()
    return ""


class Verifier:
    """Verifies bearer tokens into identities, refusing revoked sessions."""

    def __init__(
        self,
        tokens: AccessTokens,
        revocations: Revocations,
        issuers: TrustedIssuers | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._tokens = tokens
        self.revocations = revocations
        self._issuers = issuers
        self._clock = clock
        self._verified: OrderedDict[str, Identity] = OrderedDict()

    def verify(self, token: str) -> Identity:
        """The identity a token proves, now."""
        if not token:
            raise unauthenticated("TOKEN_MISSING", "send your token as 'authorization: Bearer …'")
        if len(token) > MAX_TOKEN_CHARS:
            raise unauthenticated("TOKEN_INVALID", "that token is far too long to be ours")
        identity = self._verified.get(token)
        if identity is None:
            identity = self._decode(token)
            self._verified[token] = identity
            if len(self._verified) > VERIFIED_CACHE:
                self._verified.popitem(last=False)
        self.check(identity)
        return identity

    def check(self, identity: Identity) -> None:
        """UNAUTHENTICATED if the identity expired or its session was revoked since."""
        if identity.expires_at <= self._clock():
            raise unauthenticated(
                "TOKEN_EXPIRED", "your access token has expired: refresh it or log in again"
            )
        if self.revocations.revoked(identity.session_id):
            raise unauthenticated("SESSION_REVOKED", "this session was logged out: log in again")

    def _decode(self, token: str) -> Identity:
        try:
            claimed = jwt.decode(token, options={"verify_signature": False}).get("iss")
        except jwt.PyJWTError:
            raise unauthenticated(
                "TOKEN_INVALID", "that token was not issued by this server or was altered"
            ) from None
        if claimed == ISSUER or not isinstance(claimed, str):
            return self._tokens.verify(token)
        if self._issuers is None:
            raise unauthenticated(
                "ISSUER_UNTRUSTED", "that token comes from an issuer this server does not trust"
            )
        return self._issuers.verify(token, claimed)

    def from_metadata(self, metadata: Iterable[tuple[str, Any]] | None) -> Identity:
        """The identity of the bearer token in call metadata."""
        return self.verify(bearer(metadata))
