"""GetActivity: a table's history for the activity panel, newest first, a page at a time.

Each item is one change in words (:func:`president.hosting.activity.describe`)
and as its event, redacted for the reader by the very path Watch takes: the
feed's entries (:class:`~president.services.gateway.entries.Entry`, the seat
resolved on the table after the change, ``Entry.event``). The sentence is
made from the redacted event, so it never says more than the event shows.
Recent pages come from the feed's history; older ones are folded again
from the stored events, as a resumed Watch does.

Page tokens are opaque: the version the next page ends before, the table
and the reader it was given to and when, signed with the gateway's key. A
forged or altered token, or one of another table or reader, is
``PAGE_TOKEN_INVALID``; one older than :data:`TOKEN_SECONDS` is
``PAGE_TOKEN_EXPIRED`` (both INVALID_ARGUMENT).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable

from president import codec
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.activity import describe
from president.servicekit.errors import ServiceError
from president.services.gateway.checks import invalid
from president.services.gateway.entries import Entry
from president.services.gateway.feed import FeedHub
from president.services.gateway.watch import SeatOf, folded

DEFAULT_PAGE = 50
MAX_PAGE = 200
TOKEN_SECONDS = 3600


def page_size(asked: int) -> int:
    """The page size asked for (0: the default), or INVALID_PAGE_SIZE past the most."""
    if asked > MAX_PAGE:
        raise invalid("INVALID_PAGE_SIZE", f"a page holds at most {MAX_PAGE} items, not {asked}")
    return asked or DEFAULT_PAGE


class PageTokens:
    """Signed page tokens of the activity: where the next page ends, for whom."""

    def __init__(self, key: bytes, clock: Callable[[], float] = time.time) -> None:
        self._key = hmac.new(key, b"activity-page-tokens", hashlib.sha256).digest()
        self._clock = clock

    def issue(self, table_id: str, reader: str, before: int) -> str:
        body = json.dumps(
            {"t": table_id, "r": reader, "b": before, "i": int(self._clock())},
            separators=(",", ":"),
        ).encode()
        return f"{_b64(body)}.{_b64(self._sign(body))}"

    def read(self, token: str, table_id: str, reader: str) -> int:
        """The version the page ends before; a refusal for a token that is not good here."""
        try:
            body_text, signature = token.split(".")
            body = _unb64(body_text)
            good = hmac.compare_digest(_unb64(signature), self._sign(body))
            fields = json.loads(body) if good else None
        except (ValueError, UnicodeDecodeError):
            fields = None
        if (
            not isinstance(fields, dict)
            or fields.get("t") != table_id
            or fields.get("r") != reader
            or not isinstance(fields.get("b"), int)
            or not isinstance(fields.get("i"), int)
            or fields["b"] < 2
        ):
            raise _invalid_token()
        if self._clock() - fields["i"] > TOKEN_SECONDS:
            raise invalid(
                "PAGE_TOKEN_EXPIRED",
                "this page token is more than an hour old: open the activity again from the top",
            )
        return int(fields["b"])

    def _sign(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()


def _invalid_token() -> ServiceError:
    return invalid(
        "PAGE_TOKEN_INVALID",
        "this page token was not given to you for this table's activity: "
        "use the next_page_token of your last page, or none for the newest page",
    )


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def item(entry: Entry, seat: int | None) -> pb.ActivityItem:
    """One change as the reader (``seat``; None for a spectator) may see it."""
    shown = entry.event(seat)
    seats = entry.table.game.seats
    names = [occupant.display_name or f"Seat {index}" for index, occupant in enumerate(seats)]
    text = describe(codec.decode(shown.type, shown.payload), names) or ""
    return pb.ActivityItem(version=entry.version, text=text, event=shown)


async def activity_page(
    hub: FeedHub,
    table_id: str,
    seat_for: SeatOf,
    size: int,
    before: int | None,
    tokens: PageTokens,
    reader: str,
) -> pb.GetActivityResponse:
    """The ``size`` newest changes before version ``before`` (None: the newest), newest first."""
    feed = await hub.feed(table_id)
    top = min(before - 1, feed.version) if before is not None else feed.version
    low = max(1, top - size + 1)
    history = list(feed.history)
    if history and history[0].version <= low:
        entries = [entry for entry in history if low <= entry.version <= top]
    else:  # older than the history: fold the stored events again
        stored = await hub.tables.read_events(table_id, 0, top)
        entries = [entry for entry in folded(None, stored) if low <= entry.version <= top]
    out = pb.GetActivityResponse(version=feed.version)
    for entry in reversed(entries):
        out.items.append(item(entry, seat_for(entry.table)))
    if low > 1:
        out.next_page_token = tokens.issue(table_id, reader, low)
    return out
