"""Opaque page tokens: where the next page starts, bound to what it pages, signed.

The gateway keeps no state between pages: a token holds the position of the
next page and what it was given for (a table and a reader, or a query's
filters), signed with the gateway's key (every replica has it). A token that
was forged, altered, or given for something else is ``PAGE_TOKEN_INVALID``;
with a lifetime, an older one is ``PAGE_TOKEN_EXPIRED`` (INVALID_ARGUMENT).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Mapping

from president.servicekit.errors import ServiceError
from president.services.gateway.calls.checks import invalid

DEFAULT_PAGE = 50
MAX_PAGE = 200

Position = int | str


def page_size(asked: int) -> int:
    """The page size asked for (0: the default), or INVALID_PAGE_SIZE past the most."""
    if asked > MAX_PAGE:
        raise invalid("INVALID_PAGE_SIZE", f"a page holds at most {MAX_PAGE} items, not {asked}")
    return asked or DEFAULT_PAGE


class PageTokens:
    """Page tokens of one kind (``purpose``), signed with a key derived from the gateway's."""

    def __init__(
        self,
        key: bytes,
        purpose: str,
        *,
        lifetime: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._key = hmac.new(key, f"page-tokens:{purpose}".encode(), hashlib.sha256).digest()
        self._lifetime = lifetime
        self._clock = clock

    def issue(self, bound: Mapping[str, object], position: Position) -> str:
        """A token for the page at ``position`` of what ``bound`` names."""
        body = json.dumps(
            {"b": dict(bound), "p": position, "i": int(self._clock())},
            separators=(",", ":"),
            sort_keys=True,
        ).encode()
        return f"{_b64(body)}.{_b64(self._sign(body))}"

    def read(self, token: str, bound: Mapping[str, object]) -> Position:
        """The position a token holds, if it was issued here for exactly ``bound``."""
        try:
            body_text, signature = token.split(".")
            body = _unb64(body_text)
            good = hmac.compare_digest(_unb64(signature), self._sign(body))
            fields = json.loads(body) if good else None
        except (ValueError, UnicodeDecodeError):
            fields = None
        if (
            not isinstance(fields, dict)
            or fields.get("b") != dict(bound)
            or not isinstance(fields.get("p"), int | str)
            or not isinstance(fields.get("i"), int)
        ):
            raise _invalid_token()
        if self._lifetime is not None and self._clock() - fields["i"] > self._lifetime:
            raise invalid(
                "PAGE_TOKEN_EXPIRED",
                "this page token is too old: start again from the first page",
            )
        position: Position = fields["p"]
        return position

    def _sign(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()


def _invalid_token() -> ServiceError:
    return invalid(
        "PAGE_TOKEN_INVALID",
        "this page token was not given for this list: use the next_page_token of the page "
        "before, with the same request, or none for the first page",
    )


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
