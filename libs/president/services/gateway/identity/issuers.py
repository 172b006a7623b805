"""Trusted issuers: a club's own identity provider, whose JWTs the gateway accepts as identity.

``PRESIDENT_TRUSTED_ISSUERS`` names a JSON file::

    {"issuers": [{
        "name": "club",                     # the account ids: ext:club:<sub>
        "issuer": "https://id.club.example",  # the JWT's "iss"
        "audience": "president",            # its "aud" must hold this
        "algorithms": ["RS256", "ES256"],   # RS256 and/or ES256 only
        "public_keys": ["-----BEGIN PUBLIC KEY-----..."],   # PEM, and/or
        "public_key_files": ["club.pem"],                   # PEM files, and/or
        "jwks_file": "club-jwks.json",                      # a JWKS (keys chosen by kid)
        "name_claim": "name"                # the display name (default: name)
    }]}

Relative file names are read beside the JSON file. A JWT from an issuer not
listed is ISSUER_UNTRUSTED; one whose signature none of its issuer's keys
verify is TOKEN_INVALID; a wrong audience is TOKEN_AUDIENCE; an expired one
TOKEN_EXPIRED. Such an identity has no session of ours: it lasts until the
JWT's own expiry.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from president.servicekit.identity import EXTERNAL, Identity, unauthenticated

ALGORITHMS = ("RS256", "ES256")
_KEY_TYPES: dict[str, type] = {
    "RS256": rsa.RSAPublicKey,
    "ES256": ec.EllipticCurvePublicKey,
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
MAX_SUB = 128
#: An account id fits the tables' player ids and the stored command ids.
MAX_ACCOUNT_ID = 64


@dataclass(frozen=True)
class TrustedIssuer:
    """One identity provider and the keys that verify its tokens."""

    name: str
    issuer: str
    audience: str
    algorithms: tuple[str, ...]
    #: Keys without a key id: any of them may have signed a token.
    keys: tuple[Any, ...]
    #: Keys of a JWKS, by key id.
    keys_by_id: dict[str, Any]
    name_claim: str = "name"

    def verify(self, token: str, header: dict[str, Any], now: float) -> Identity:
        """The identity a token of this issuer vouches for."""
        kid = header.get("kid")
        candidates: list[Any] = (
            [self.keys_by_id[kid]]
            if isinstance(kid, str) and kid in self.keys_by_id
            else [*self.keys, *self.keys_by_id.values()]
        )
        key_type = _KEY_TYPES.get(str(header.get("alg")))
        raw: dict[str, Any] | None = None
        for key in candidates:
            if key_type is None or not isinstance(key, key_type):
                continue  # an RSA key never checks an ES256 signature, nor the reverse
            chosen: Any = key
            try:
                raw = jwt.decode(
                    token,
                    chosen,
                    algorithms=list(self.algorithms),
                    issuer=self.issuer,
                    audience=self.audience,
                    options={"require": ["exp", "sub", "iss", "aud"], "verify_exp": False},
                )
                break
            except jwt.InvalidAudienceError:
                raise unauthenticated(
                    "TOKEN_AUDIENCE",
                    f"that token is meant for another service, not {self.audience!r}",
                ) from None
            except jwt.PyJWTError:
                continue
        if raw is None:
            raise unauthenticated(
                "TOKEN_INVALID", f"that token's signature is not one of {self.name}'s keys"
            )
        sub, expires = raw.get("sub"), raw.get("exp")
        if not isinstance(sub, str) or not sub or len(sub) > MAX_SUB:
            raise unauthenticated("TOKEN_INVALID", "that token does not say who you are")
        if not isinstance(expires, int | float) or isinstance(expires, bool):
            raise unauthenticated("TOKEN_INVALID", "that token does not say when it expires")
        if expires <= now:
            raise unauthenticated("TOKEN_EXPIRED", f"your {self.name} token has expired")
        account_id = f"ext:{self.name}:{sub}"
        if len(account_id) > MAX_ACCOUNT_ID:
            raise unauthenticated("TOKEN_INVALID", "that token's subject is too long")
        return Identity(
            account_id,
            _shown(raw.get(self.name_claim), sub),
            EXTERNAL,
            "",
            int(expires),
        )


def _shown(claim: object, sub: str) -> str:
    """A display name from the issuer's claim, made safe to show (at most 40 characters)."""
    text = claim if isinstance(claim, str) else sub
    text = "".join(
        ch for ch in unicodedata.normalize("NFKC", text) if unicodedata.category(ch)[0] != "C"
    )
    return text.strip()[:40] or "Player"


class TrustedIssuers:
    """The configured issuers, by their ``iss``."""

    def __init__(self, issuers: list[TrustedIssuer], clock: Callable[[], float]) -> None:
        self._by_issuer = {issuer.issuer: issuer for issuer in issuers}
        self._clock = clock

    def verify(self, token: str, claimed_issuer: str) -> Identity:
        """The identity of a token claiming to come from ``claimed_issuer``."""
        issuer = self._by_issuer.get(claimed_issuer)
        if issuer is None:
            raise unauthenticated(
                "ISSUER_UNTRUSTED", "that token comes from an issuer this server does not trust"
            )
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise unauthenticated("TOKEN_INVALID", "that is not a token") from None
        return issuer.verify(token, header, self._clock())


def load_issuers(path: str) -> list[TrustedIssuer]:
    """The issuers a JSON file configures (ValueError with a sentence if it is wrong)."""
    if not path:
        return []
    file = Path(path)
    try:
        config = json.loads(file.read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"PRESIDENT_TRUSTED_ISSUERS: cannot read {path}: {error}") from None
    entries = config.get("issuers") if isinstance(config, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f'{path}: expected {{"issuers": [...]}}')
    return [_issuer(entry, file.parent, path) for entry in entries]


def _issuer(entry: Any, base: Path, path: str) -> TrustedIssuer:
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: each issuer is an object")
    name, issuer, audience = entry.get("name"), entry.get("issuer"), entry.get("audience")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"{path}: an issuer's name is 1-32 of a-z, 0-9, _ and -")
    if not isinstance(issuer, str) or not issuer or not isinstance(audience, str) or not audience:
        raise ValueError(f"{path}: issuer {name!r} needs an issuer and an audience")
    algorithms = tuple(entry.get("algorithms") or ALGORITHMS)
    if not set(algorithms) <= set(ALGORITHMS):
        raise ValueError(f"{path}: issuer {name!r}: algorithms are RS256 and ES256 only")
    pems = [str(pem) for pem in entry.get("public_keys") or ()]
    pems += [(base / str(f)).read_text() for f in entry.get("public_key_files") or ()]
    keys = tuple(load_pem_public_key(pem.encode()) for pem in pems)
    by_id: dict[str, Any] = {}
    if entry.get("jwks_file"):
        jwks = jwt.PyJWKSet.from_json((base / str(entry["jwks_file"])).read_text())
        for index, found in enumerate(jwks.keys):
            by_id[found.key_id or f"#{index}"] = found.key
    if not keys and not by_id:
        raise ValueError(f"{path}: issuer {name!r} has no keys")
    return TrustedIssuer(
        name, issuer, audience, algorithms, keys, by_id, str(entry.get("name_claim") or "name")
    )
