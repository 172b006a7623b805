"""The table service publishes every round's commitment in the public commitment feed.

A tracked consumer (``commitment-feed``) of the store's global order: each
refresh reads the ``DealCommitted`` events appended since its position (by any
replica), and appends one feed entry per such event of a table's log
(:mod:`president.store.commitments`) in the transaction that advances the
position, so each commitment is published exactly once, in commit order,
within a moment of its commit and long before its round's secret is revealed.
:func:`list_commitments` is what ``ListCommitments`` reads of it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable

from sqlalchemy import Connection

from president import codec
from president.events.v1 import events_pb2 as pb
from president.hosting.events import DealCommitted
from president.hosting.streams import STREAM_PREFIX
from president.servicekit.errors import Code, ServiceError
from president.store import EventStore, Position, StoredEvent
from president.store.commitments import Commitment, FeedEntry, append_commitments, read_feed

CONSUMER = "commitment-feed"
#: How often the table service publishes what was committed since (seconds).
PUBLISH_SECONDS = 0.5

#: Entries per ListCommitments, at most.
PAGE = 1_000

_DEAL_COMMITTED = codec.type_name(pb.DealCommitted)
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # ASCII digits (\\d also takes "٢")


def commitment_of(event: StoredEvent) -> Commitment | None:
    """The commitment a stored event publishes (None: it is no table's ``DealCommitted``)."""
    if event.type != _DEAL_COMMITTED or not event.stream_id.startswith(STREAM_PREFIX):
        return None
    committed = codec.decode(event.type, event.payload)
    assert isinstance(committed, DealCommitted)
    return Commitment(
        stream_id=event.stream_id,
        version=event.version,
        game_no=committed.game_no,
        round_no=committed.round_no,
        fingerprint=committed.fingerprint,
        committed_at=event.time,
    )


class CommitmentPublisher:
    """Keeps the commitment feed up to date with the store's global order.

    Each refresh reads only the ``DealCommitted`` events committed since, and the
    newest position (:meth:`~president.store.log.LogRecorder.read_all_of_type`). It
    writes, and moves the consumer's tracked position, only when it found some to
    publish; between, it remembers how far it looked, so a refresh neither reads every
    event again nor opens a write transaction for nothing. After a restart it looks
    again from the tracked position: the range holds no commitment it missed.
    """

    def __init__(self, store: EventStore) -> None:
        self._store = store
        #: The tracked position as last read, and how far this publisher looked past it.
        self._tracked: Position | None = None
        self._looked: Position | None = None

    def refresh(self) -> int:
        """Publish every commitment appended since the last refresh; returns how many."""
        store = self._store
        if self._tracked is None or self._looked is None:
            self._tracked = self._looked = store.tracked_position(CONSUMER)
        events, newest = store.read_all_of_type(self._looked, _DEAL_COMMITTED)
        found = [c for c in (commitment_of(event) for event in events) if c is not None]
        if not found:
            self._looked = newest
            return 0
        tracked = self._tracked

        def publish(connection: Connection) -> None:
            append_commitments(connection, found)

        self._tracked = self._looked = None  # read the tracked position again next time
        if not store.commit_from(CONSUMER, tracked, newest, publish):
            return 0  # another replica published them (or more): look again from there
        self._tracked = self._looked = newest
        return len(found)


async def publish_forever(
    publisher: CommitmentPublisher,
    in_worker: Callable[[Callable[[], int]], Awaitable[int]],
    seconds: float = PUBLISH_SECONDS,
) -> None:
    """Refresh the feed every ``seconds`` (in a worker thread), until cancelled."""
    while True:
        await in_worker(publisher.refresh)
        await asyncio.sleep(seconds)


#: The largest sequence number the feed's column holds (a signed 64-bit integer).
LARGEST_SEQ = 2**63 - 1


def list_commitments(store: EventStore, day: str, after_seq: int, limit: int) -> list[FeedEntry]:
    """A page of the feed (``day`` ``YYYY-MM-DD`` or empty: every day); INVALID_DAY otherwise."""
    if day and not _DAY.fullmatch(day):
        raise ServiceError(
            Code.INVALID_ARGUMENT,
            "INVALID_DAY",
            f"day {day!r} is not a UTC day written YYYY-MM-DD (or empty: every day)",
        )
    if after_seq > LARGEST_SEQ:
        return []  # past any entry a database column can number
    count = min(limit or PAGE, PAGE)
    return read_feed(store.engine, day or None, after_seq, count)
