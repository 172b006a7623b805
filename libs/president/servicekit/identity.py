"""Who a player is, and the access token that says so (a JWT, HS256 on a shared key).

The players service signs access tokens; every gateway replica verifies them
by itself with the same key (``PRESIDENT_TOKEN_SECRET``). A token names an
account, its display name, its kind (guest, named, external, bot) and its
session, and says when it expires: nothing about a table or a role. What a
player may do at a table is read from the table's state.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jwt

from president.players.v1 import players_pb2 as ppb
from president.servicekit.errors import Code, ServiceError

GUEST = "guest"
NAMED = "named"
EXTERNAL = "external"
BOT = "bot"
KINDS = (GUEST, NAMED, EXTERNAL, BOT)
#: The account of the server's own commands (each bot level's is
#: :func:`president.rules.levels.bot_account`).
SERVER_ACCOUNT = "server"

ISSUER = "president-players"
AUDIENCE = "president"
ALGORITHM = "HS256"
MAX_TOKEN_CHARS = 8192


def unauthenticated(reason: str, message: str) -> ServiceError:
    """An UNAUTHENTICATED refusal."""
    return ServiceError(Code.UNAUTHENTICATED, reason, message)


@dataclass(frozen=True)
class Identity:
    """What a verified access token says."""

    account_id: str
    display_name: str
    kind: str
    session_id: str
    expires_at: int


def signing_key(secret: str) -> bytes:
    """The HS256 key of a shared secret of any length (its SHA-256, as HS256 wants 32 bytes)."""
    if not secret:
        raise ValueError("a token secret is needed")
    return hashlib.sha256(b"president-identity:" + secret.encode()).digest()


class AccessTokens:
    """Signs and verifies the players service's access tokens."""

    def __init__(self, secret: str, clock: Callable[[], float] = time.time) -> None:
        self._key = signing_key(secret)
        self._clock = clock

    def issue(self, identity: Identity) -> str:
        """A signed access token for ``identity`` (it carries its own expiry)."""
        if identity.kind not in KINDS:
            raise ValueError(f"unknown account kind {identity.kind!r}")
        claims: dict[str, Any] = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": identity.account_id,
            "name": identity.display_name,
            "kind": identity.kind,
            "sid": identity.session_id,
            "iat": int(self._clock()),
            "exp": identity.expires_at,
            # Every token is its own, even two issued in one second for one session.
            "jti": secrets.token_hex(8),
        }
        return jwt.encode(claims, self._key, algorithm=ALGORITHM)

    def verify(self, token: str) -> Identity:
        """The identity of a token signed with this key; UNAUTHENTICATED if forged or expired.

        Revocation is not checked here (the players service asks its store,
        the gateway its revocation list).
        """
        if not token:
            raise unauthenticated("TOKEN_MISSING", "send your token as 'authorization: Bearer …'")
        if len(token) > MAX_TOKEN_CHARS:
            raise unauthenticated("TOKEN_INVALID", "that token is far too long to be ours")
        try:
            raw = jwt.decode(
                token,
                self._key,
                algorithms=[ALGORITHM],
                issuer=ISSUER,
                audience=AUDIENCE,
                # The expiry is checked below, against the injected clock.
                options={
                    "require": ["exp", "iat", "sub", "iss", "aud", "sid"],
                    "verify_exp": False,
                    "verify_iat": False,
                },
            )
        except jwt.PyJWTError:
            raise unauthenticated(
                "TOKEN_INVALID", "that token was not issued by this server or was altered"
            ) from None
        identity = identity_of_claims(raw)
        if identity.expires_at <= self._clock():
            raise unauthenticated(
                "TOKEN_EXPIRED", "your access token has expired: refresh it or log in again"
            )
        return identity


def identity_of_claims(raw: dict[str, Any]) -> Identity:
    """The identity our access token's claims describe (UNAUTHENTICATED if malformed)."""
    account, name, kind, session = raw.get("sub"), raw.get("name"), raw.get("kind"), raw.get("sid")
    expires_at = raw.get("exp")
    if not (
        isinstance(account, str)
        and account
        and isinstance(name, str)
        and kind in KINDS
        and isinstance(session, str)
        and isinstance(expires_at, int)
        and not isinstance(expires_at, bool)
    ):
        raise unauthenticated("TOKEN_INVALID", "that token does not say who you are")
    assert isinstance(kind, str)
    return Identity(account, name, kind, session, expires_at)


#: The proto's account kind of each kind.
KIND_VALUES = {
    GUEST: ppb.ACCOUNT_KIND_GUEST,
    NAMED: ppb.ACCOUNT_KIND_NAMED,
    EXTERNAL: ppb.ACCOUNT_KIND_EXTERNAL,
    BOT: ppb.ACCOUNT_KIND_BOT,
}


def identity_message(identity: Identity) -> ppb.Identity:
    """An identity as the protos carry it."""
    return ppb.Identity(
        account_id=identity.account_id,
        display_name=identity.display_name,
        kind=KIND_VALUES.get(identity.kind, ppb.ACCOUNT_KIND_UNSPECIFIED),
        session_id=identity.session_id,
        expires_at=identity.expires_at,
    )
