"""Signed bearer tokens (JWT, HS256) and the rights they carry.

A token names one table, one player and a role: ``player`` and ``host`` act
for a seat (the host also runs host actions), ``spectator`` and ``auditor``
only read (an auditor may also check deals). Clients send it in the metadata
``authorization: Bearer <token>``. A missing, forged or expired token is
UNAUTHENTICATED with the reason TOKEN_MISSING, TOKEN_INVALID or TOKEN_EXPIRED.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import grpc
import jwt

from president.servicekit.errors import ServiceError

PLAYER = "player"
HOST = "host"
SPECTATOR = "spectator"
AUDITOR = "auditor"
ROLES = (PLAYER, HOST, SPECTATOR, AUDITOR)
READ_ONLY_ROLES = (SPECTATOR, AUDITOR)

ISSUER = "president-gateway"
ALGORITHM = "HS256"
AUTHORIZATION = "authorization"
#: Optional metadata naming the table a call is meant for: it must be the token's table.
TABLE_HEADER = "president-table-id"
MAX_TOKEN_CHARS = 4096
#: Verified tokens kept, so a player's many calls verify the signature once.
VERIFIED_CACHE = 20_000


def unauthenticated(reason: str, message: str) -> ServiceError:
    """An UNAUTHENTICATED refusal."""
    return ServiceError(grpc.StatusCode.UNAUTHENTICATED, reason, message)


def denied(reason: str, message: str) -> ServiceError:
    """A PERMISSION_DENIED refusal."""
    return ServiceError(grpc.StatusCode.PERMISSION_DENIED, reason, message)


@dataclass(frozen=True)
class Claims:
    """What a verified token says."""

    table_id: str
    player_id: str
    role: str
    seat: int | None
    expires_at: int

    @property
    def read_only(self) -> bool:
        """Spectators and auditors read and never write."""
        return self.role in READ_ONLY_ROLES

    @property
    def is_host(self) -> bool:
        """Whether the token carries the host's rights."""
        return self.role == HOST


def new_player_id() -> str:
    """A fresh player id."""
    return f"p-{secrets.token_hex(8)}"


def random_secret() -> str:
    """A signing secret for a gateway started without PRESIDENT_TOKEN_SECRET."""
    return secrets.token_urlsafe(32)


class Tokens:
    """Issues and verifies the gateway's bearer tokens."""

    def __init__(
        self, secret: str, ttl_seconds: int, clock: Callable[[], float] = time.time
    ) -> None:
        if not secret:
            raise ValueError("a token secret is needed")
        if ttl_seconds < 1:
            raise ValueError("tokens must live at least one second")
        # Any secret length works: the signing key is its SHA-256 (HS256 wants 32 bytes).
        self._secret = hashlib.sha256(b"president-token:" + secret.encode()).digest()
        self._ttl = ttl_seconds
        self._clock = clock
        self._verified: OrderedDict[str, Claims] = OrderedDict()

    def issue(self, table_id: str, player_id: str, role: str, seat: int | None = None) -> str:
        """A signed token for ``player_id`` at ``table_id`` with ``role`` (and ``seat``)."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}")
        now = int(self._clock())
        claims: dict[str, Any] = {
            "iss": ISSUER,
            "sub": player_id,
            "tbl": table_id,
            "role": role,
            "iat": now,
            "exp": now + self._ttl,
        }
        if seat is not None:
            claims["seat"] = seat
        return jwt.encode(claims, self._secret, algorithm=ALGORITHM)

    def verify(self, token: str) -> Claims:
        """The claims of a token this gateway (or a replica sharing its secret) signed."""
        if not token:
            raise unauthenticated("TOKEN_MISSING", "send your token as 'authorization: Bearer …'")
        if len(token) > MAX_TOKEN_CHARS:
            raise unauthenticated("TOKEN_INVALID", "that token is far too long to be ours")
        known = self._verified.get(token)
        if known is not None:
            if known.expires_at > self._clock():
                return known
            del self._verified[token]
        claims = self._decode(token)
        self._verified[token] = claims
        if len(self._verified) > VERIFIED_CACHE:
            self._verified.popitem(last=False)
        return claims

    def _decode(self, token: str) -> Claims:
        try:
            raw = jwt.decode(
                token,
                self._secret,
                algorithms=[ALGORITHM],
                issuer=ISSUER,
                # The times are checked below, against the injected clock.
                options={
                    "require": ["exp", "iat", "sub", "iss"],
                    "verify_exp": False,
                    "verify_iat": False,
                },
            )
        except jwt.PyJWTError:
            raise unauthenticated(
                "TOKEN_INVALID", "that token was not issued by this gateway or was altered"
            ) from None
        claims = _claims(raw)
        if claims.expires_at <= self._clock():
            raise unauthenticated(
                "TOKEN_EXPIRED", "your token has expired: join the table again for a new one"
            )
        return claims

    def from_metadata(self, metadata: Iterable[tuple[str, Any]] | None) -> Claims:
        """The claims of the bearer token in call metadata; the table header must match."""
        token = ""
        table_header = None
        for key, value in metadata or ():
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
            if key == AUTHORIZATION:
                scheme, _, rest = text.strip().partition(" ")
                if scheme.lower() != "bearer" or not rest.strip():
                    raise unauthenticated(
                        "TOKEN_MISSING", "the authorization metadata must read 'Bearer <token>'"
                    )
                token = rest.strip()
            elif key == TABLE_HEADER:
                table_header = text
        claims = self.verify(token)
        if table_header is not None and table_header != claims.table_id:
            raise denied(
                "WRONG_TABLE",
                f"this token is for table {claims.table_id}, not {table_header}: "
                "a token acts only at its own table",
            )
        return claims


def _claims(raw: dict[str, Any]) -> Claims:
    table_id, player_id, role = raw.get("tbl"), raw.get("sub"), raw.get("role")
    seat = raw.get("seat")
    well_formed = (
        isinstance(table_id, str)
        and isinstance(player_id, str)
        and role in ROLES
        and (seat is None or (isinstance(seat, int) and not isinstance(seat, bool) and seat >= 0))
        and ((seat is None) == (role in READ_ONLY_ROLES))
    )
    if not well_formed:
        raise unauthenticated("TOKEN_INVALID", "that token does not say which table and seat")
    assert isinstance(table_id, str) and isinstance(player_id, str) and isinstance(role, str)
    expires_at = raw.get("exp")
    if not isinstance(expires_at, int | float) or isinstance(expires_at, bool):
        raise unauthenticated("TOKEN_INVALID", "that token does not say when it expires")
    return Claims(table_id, player_id, role, seat, int(expires_at))


def require_writer(claims: Claims) -> None:
    """PERMISSION_DENIED (READ_ONLY) for spectator and auditor tokens."""
    if claims.read_only:
        raise denied(
            "READ_ONLY",
            f"{_article(claims.role)} {claims.role} token only watches the table: "
            "join a seat to play",
        )


def require_host(claims: Claims, what: str) -> None:
    """PERMISSION_DENIED unless the token is the host's (READ_ONLY first for readers)."""
    require_writer(claims)
    if not claims.is_host:
        raise denied("NOT_HOST", f"only the table's host may {what}")


def require_checker(claims: Claims) -> None:
    """Players and auditors check deals; a spectator token does not."""
    if claims.role == SPECTATOR:
        raise denied(
            "READ_ONLY",
            "a spectator token cannot check deals: ask for an auditor token (Spectate, auditor)",
        )


def _article(word: str) -> str:
    """ "an" before a vowel ("an auditor token"), else "a"."""
    return "an" if word[:1].lower() in "aeiou" else "a"
