"""GetActivity: a table's history for the activity panel, newest first, a page at a time.

Each item is one change in words (:func:`president.hosting.activity.describe`)
and as its event, redacted for the reader by the very path Watch takes: the
feed's entries (:class:`~president.services.gateway.streams.entries.Entry`, the seat
resolved on the table after the change, ``Entry.event``). The sentence is
made from the redacted event, so it never says more than the event shows.
Recent pages come from the feed's history; older ones are folded again
from the stored events, as a resumed Watch does.

Page tokens (:mod:`president.services.gateway.calls.page_tokens`) hold the
version the next page ends before, bound to the table and the reader, for
:data:`TOKEN_SECONDS`.
"""

from __future__ import annotations

from president import codec
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.activity import describe
from president.services.gateway.calls.checks import invalid
from president.services.gateway.calls.page_tokens import PageTokens
from president.services.gateway.streams.entries import Entry
from president.services.gateway.streams.fanout import SeatOf
from president.services.gateway.streams.feed import FeedHub
from president.services.gateway.streams.watch import folded

#: How long an activity page token is good for.
TOKEN_SECONDS = 3600


def activity_tokens(key: bytes) -> PageTokens:
    """The page tokens of the activity (bound to a table and a reader, good for an hour)."""
    return PageTokens(key, "activity", lifetime=TOKEN_SECONDS)


def before_version(tokens: PageTokens, token: str, table_id: str, reader: str) -> int:
    """The version the page of ``token`` ends before (PAGE_TOKEN_INVALID if it is not one)."""
    before = tokens.read(token, {"table": table_id, "reader": reader})
    if not isinstance(before, int) or before < 2:
        raise invalid("PAGE_TOKEN_INVALID", "this page token holds no page of the activity")
    return before


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
        out.next_page_token = tokens.issue({"table": table_id, "reader": reader}, low)
    return out
