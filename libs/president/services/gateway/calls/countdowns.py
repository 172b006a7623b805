"""GetTable's countdown: the view the table service built, with the deadline this gateway follows.

The table service's view holds the table's state; the running timer's start
is the commit time of the event that started it, which this gateway's feed
tracks for every version it applies (``Entry.countdown``). So the view gets
the deadline of the feed's entry at the view's own version, and the server's
clock now.
"""

from __future__ import annotations

from datetime import UTC, datetime

from president.game.v1 import game_pb2 as gpb
from president.hosting.countdown import unix_ms
from president.services.gateway.streams.entries import Entry
from president.services.gateway.streams.feed import FeedHub, TableFeed


def _entry_at(feed: TableFeed, version: int) -> Entry | None:
    current = feed.current
    if current is not None and current.version == version:
        return current
    return next((entry for entry in reversed(feed.history) if entry.version == version), None)


async def with_countdown(hub: FeedHub, table_id: str, view: gpb.TableView) -> gpb.TableView:
    """``view`` (of ``table_id``) with its deadline and the server's now set."""
    feed = await hub.feed(table_id)
    entry = _entry_at(feed, view.version)
    if entry is None and view.version > feed.version:
        await feed.catch_up()
        entry = _entry_at(feed, view.version)
    if entry is not None:
        view.MergeFrom(entry.countdown())
    view.server_now_unix_ms = unix_ms(datetime.now(UTC))
    return view
