"""The HTTP spectators of one table at this replica: a paced broadcast of the table's changes
(:class:`~president.services.gateway.streams.fanout.Broadcast`), framed as Connect's
server stream over HTTP/1.1.

A change is framed once per encoding (:data:`WIRES`: each change an envelope, a write
one chunk) and the same bytes go to every spectator that holds the version before it,
at most once per :data:`FLUSH_SECONDS`; a spectator that fell behind (its socket full)
gets the view now, marked ``skipped``, once it drains (the same bytes for every
spectator skipped there). The spectators are the door's connections
(:class:`~president.services.gateway.api.audience_http.SpectatorStream`).
"""

from __future__ import annotations

from president.services.gateway.api.connect import JSON, PROTO, Codec, chunk, envelope
from president.services.gateway.streams.audience import delivered
from president.services.gateway.streams.entries import Entry
from president.services.gateway.streams.fanout import Broadcast, Wire
from president.services.gateway.streams.feed import TableFeed
from president.services.gateway.streams.watch import snapshot

#: Changes within this long of a spectator's last write go out with the next: a flush
#: writes once to every spectator.
FLUSH_SECONDS = 0.04


def connect_wire(codec: Codec) -> Wire:
    """Connect's server stream over HTTP/1.1 in ``codec``: each change an envelope of the
    spectators' shared ``WatchResponse``, a write one chunk."""

    def one(serialized: bytes) -> bytes:
        return envelope(codec.encode(serialized))

    def whole(entry: Entry, seat: int | None, skipped: bool) -> bytes:
        return chunk(one(snapshot(entry, seat, skipped)))

    return Wire(
        f"connect-h1 {codec.content_type}",
        change=lambda entry, seat: chunk(one(entry.watch_response(seat))),
        whole=whole,
        part=lambda entry, seat: one(entry.watch_response(seat)),
        join=lambda parts: chunk(b"".join(parts)),
    )


WIRES = {codec: connect_wire(codec) for codec in (PROTO, JSON)}


def crowd(feed: TableFeed) -> Broadcast:
    """A new paced broadcast of ``feed``'s HTTP spectators, which the feed tells of its
    changes and closes (SERVER_DRAINING) with itself."""
    broadcast = Broadcast(feed, pace=lambda: FLUSH_SECONDS, delivered=delivered)
    feed.crowds.append(broadcast)
    return broadcast
