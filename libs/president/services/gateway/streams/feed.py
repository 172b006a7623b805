"""Following one table here and fanning its changes out to every watcher of it.

A :class:`TableFeed` follows one table: it subscribes to the table's NATS
subject first, then reads the stored events from the table service and folds
them into a local :class:`~president.hosting.projection.Table`. After that it applies
envelopes strictly in version order (:mod:`president.servicekit.follower`):
one at or below its version is dropped (no duplicate), one that skips ahead
makes it read the missing ones from the store (no gap). Each applied event
becomes an :class:`~president.services.gateway.streams.entries.Entry` (the event and
the table after it), kept in a short history: once what came together is applied, the
seats' streams are written what they lack
(:class:`~president.services.gateway.streams.fanout.Broadcast`), and the spectators'
paced broadcasts (:mod:`president.services.gateway.streams.audience`, the audience
door's crowds) are told of it.

A version is not an event, though: a database that fails over to a standby
that had not received its last commits (asynchronous replication) gives
those versions to new events. An event whose hash is not the one applied
here at its version (or that does not follow the hash applied last) says
the table's history was rewound under this feed: the feed closes, its
streams end with ``DATA_LOSS`` ``HISTORY_REWOUND`` (their watchers saw
changes the store no longer has), and the next watcher gets a new feed,
read from the store as it is now. A history rewound with no new event after
it shows no such event: the table's players act on the lost state and are
refused. A refusal makes the feed check that the store still holds the last
event applied here (:meth:`TableFeed.check`); when it does not, the history
was rewound.

Without NATS (not reachable yet, or lost), feeds poll the store, so a watcher
never waits on the message bus for correctness, only for speed.

:class:`FeedHub` holds this gateway's feeds, by table: created on first use,
dropped when idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Sequence

import structlog
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from prometheus_client import Gauge

from president.events.v1 import events_pb2 as epb
from president.hosting.deadlines import IdleRules
from president.hosting.projection import Table
from president.servicekit.errors import DRAINING, Code, ServiceError
from president.servicekit.follower import NEXT, SEEN, Gap, HeldEnvelopes, place, read_gap
from president.servicekit.nats import Subjects, hash_in, version_in
from president.services.gateway.streams import audience
from president.services.gateway.streams.entries import Entry, apply, with_clock
from president.services.gateway.streams.fanout import Broadcast
from president.services.gateway.upstream.ports import TablePort

HISTORY = 512
POLL_SECONDS = 2.0
POLL_SECONDS_WITHOUT_NATS = 0.25
IDLE_SECONDS = 60.0
NUDGE_SECONDS = 0.1

#: A table's refusals of a command chosen on what its sender saw (the state, a version).
REFUSED_ON_STATE = frozenset({Code.ABORTED, Code.FAILED_PRECONDITION, Code.INVALID_ARGUMENT})

FEEDS = Gauge(
    "president_gateway_feeds", "Tables this gateway follows (one NATS subscription each)."
)


def draining() -> ServiceError:
    """Every stream's end when the replica stops: resume from the last version."""
    return ServiceError(Code.UNAVAILABLE, "SERVER_DRAINING", DRAINING)


def not_found(table_id: str) -> ServiceError:
    """NOT_FOUND for a table nobody created."""
    return ServiceError(Code.NOT_FOUND, "TABLE_NOT_FOUND", f"no table {table_id!r}")


def history_rewound(table_id: str) -> ServiceError:
    """DATA_LOSS for a stream that showed changes the store no longer has."""
    return ServiceError(
        Code.DATA_LOSS,
        "HISTORY_REWOUND",
        f"the history of table {table_id!r} was rewound: its database lost its last "
        "changes in a failover, and this stream showed some of them; watch again from "
        "the start",
    )


class TableFeed:
    """One table followed in version order, shared by every watcher of the table here."""

    def __init__(
        self, table_id: str, tables: TablePort, subject: str, idle: IdleRules | None = None
    ) -> None:
        self.table_id = table_id
        #: The timer service's waits: the countdown between rounds, after a game, when empty.
        self._idle = idle
        self.subject = subject
        self._tables = tables
        self.current: Entry | None = None
        self.history: deque[Entry] = deque(maxlen=HISTORY)
        #: The streams of those who hold a seat, written first (every change they lack).
        self.seats = Broadcast(self)
        #: Paced broadcasts of spectators' streams (the audience's HTTP door's, per door).
        self.crowds: list[Broadcast] = []
        #: The gRPC spectators' streams: paced, written after the seats, a batch per turn.
        self.audience = audience.broadcast(self)
        self._written = 0
        self._held = HeldEnvelopes()
        self._inbox: asyncio.Queue[epb.EventEnvelope | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._subscription: Subscription | None = None
        self._sync = asyncio.Lock()
        self.last_used = time.monotonic()
        self.last_message = time.monotonic()
        self.last_poll = time.monotonic()
        self._catch_up_queued = False
        self.closed = False
        #: The store's history of the table is not the one applied here (see the module).
        self.rewound = False
        #: An event came that does not follow the hash applied last: rewound.
        self._broken = False
        #: The next catch-up checks that the store holds the last event applied here.
        self._check = False

    # -- state ----------------------------------------------------------------
    @property
    def version(self) -> int:
        return self.current.version if self.current is not None else 0

    @property
    def table(self) -> Table:
        assert self.current is not None
        return self.current.table

    def touch(self) -> None:
        self.last_used = time.monotonic()

    # -- life -----------------------------------------------------------------
    async def start(self, client: Client | None) -> None:
        """Subscribe (when NATS is there), then load the stored events."""
        if client is not None:
            await self.subscribe(client)
        await self.catch_up()
        if self.current is None:
            await self.close()
            raise not_found(self.table_id)
        self._task = asyncio.create_task(self._run(), name=f"feed-{self.table_id}")

    async def subscribe(self, client: Client) -> None:
        """Receive the table's envelopes from NATS from now on."""
        if self._subscription is not None:
            return

        async def received(message: Msg) -> None:
            self.last_message = time.monotonic()
            known = version_in(message.headers)
            if (
                known is not None
                and known <= self.version
                and not self._differs(known, hash_in(message.headers))
            ):
                return  # shown already (a command's answer brought it): not parsed again
            try:
                envelope = epb.EventEnvelope.FromString(message.data)
            except Exception:
                return
            self._inbox.put_nowait(envelope)

        self._subscription = await client.subscribe(self.subject, cb=received)
        await client.flush(timeout=5)
        self.request_catch_up()  # catch up with what was stored before the subscription

    @property
    def subscribed(self) -> bool:
        return self._subscription is not None

    def unsubscribed(self) -> None:
        """NATS went away: poll until it is back."""
        self._subscription = None

    async def close(self) -> None:
        self.closed = True
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
            self._subscription = None
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        rewound = history_rewound(self.table_id) if self.rewound else None
        self.seats.close(rewound)  # a seat's stream ends, or fails when it showed lost changes
        for crowd in self.crowds:
            crowd.close(rewound or draining())
        self.crowds.clear()
        self.audience.close(rewound)

    def request_catch_up(self) -> None:
        """Read the store for anything newer (a poll, a nudge after a command)."""
        if not self._catch_up_queued:
            self._catch_up_queued = True
            self._inbox.put_nowait(None)

    async def _run(self) -> None:
        log = structlog.get_logger().bind(service="gateway")
        while not self.closed:
            item = await self._inbox.get()
            try:
                if item is None:
                    self._catch_up_queued = False
                    await self.catch_up()
                else:
                    await self._received(item)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the store or the table service hiccupped: poll again
                log.warning("feed catch-up failed", table_id=self.table_id, error=repr(error))
                await asyncio.sleep(0.2)
                self.request_catch_up()

    # -- applying ---------------------------------------------------------------
    async def _received(self, envelope: epb.EventEnvelope) -> None:
        where = place(self.version, envelope.version)
        if where is SEEN:
            if self._differs(envelope.version, envelope.hash):
                await self._rewind(envelope.version)
            return  # already applied: no duplicate
        if where is NEXT and self.current is not None:
            self._apply(envelope)
            self._release_held()
            if self._broken:
                await self._rewind(envelope.version)
            return
        self._held.hold(envelope)
        await self.catch_up()  # a gap: read what is missing from the store

    async def catch_up(self) -> None:
        """Apply every stored event after the current version (and, when asked to
        :meth:`check`, read the last one applied here again: rewound if the store lost it)."""
        async with self._sync:
            checked = self.version if self._check else 0
            after = checked - 1 if checked else self.version
            events = await read_gap(self._tables, Gap(self.table_id, after))
            self._check = False  # done (a failed read keeps it for the next catch-up)
            if checked and (
                not events or events[0].version != checked or self._differs(checked, events[0].hash)
            ):
                lost = True  # the store's history ends before it, or holds another event
            else:
                lost = False
                for envelope in events:
                    if place(self.version, envelope.version) is NEXT:
                        self._apply(envelope)
                self._release_held()
        if lost:
            await self._rewind(checked)
        elif self._broken:
            await self._rewind(self.version + 1)

    def check(self) -> None:
        """A command at this table was refused: perhaps its sender acted on changes the
        store lost (a history rewound with no new event after it). The next catch-up reads
        the last event applied here again, and the feed closes (rewound) if it is gone."""
        if self.current is not None and not self.closed:
            self._check = True
            self.request_catch_up()

    # -- a rewound history --------------------------------------------------------------
    def _hash_at(self, version: int) -> str:
        """The hash of the event applied here at ``version`` ("": not in the history)."""
        history = self.history
        index = version - history[0].version if history else -1
        if 0 <= index < len(history):
            return history[index].envelope.hash
        return ""

    def _differs(self, version: int, event_hash: str) -> bool:
        """Whether ``event_hash`` (or the start of it) is not the hash applied at ``version``."""
        mine = self._hash_at(version)
        return bool(mine and event_hash) and not mine.startswith(event_hash)

    async def _rewind(self, version: int) -> None:
        """The store's history is not the one applied here: close (the streams end with
        HISTORY_REWOUND); the hub starts a new feed from the store for the next watcher."""
        if self.closed:
            return
        structlog.get_logger().warning(
            "the table's history was rewound under its feed: its streams end",
            service="gateway",
            table_id=self.table_id,
            at_version=version,
            applied_version=self.version,
        )
        self.rewound = True
        await self.close()

    def offer(self, envelopes: Sequence[epb.EventEnvelope]) -> None:
        """Events a command through this gateway committed: apply them now, in order.

        NATS brings them too, a little later: dropped then as duplicates.
        """
        for envelope in envelopes:
            if envelope.version > self.version:
                self._held.hold(envelope)
            elif self._differs(envelope.version, envelope.hash):
                self._inbox.put_nowait(envelope)  # rewound: the feed's task closes it
        if self.current is not None:
            self._release_held()

    def _release_held(self) -> None:
        held = self._held
        while (envelope := held.take_next(self.version)) is not None:
            self._apply(envelope)
        held.forget_through(self.version)
        if self.version > self._written:  # what came together goes out together
            self._written = self.version
            self.seats.flush()  # seats first: now
            self.audience.changed()
            for crowd in self.crowds:
                crowd.changed()

    def _entry(self, envelope: epb.EventEnvelope) -> Entry:
        """The entry of the next envelope, with the table's timer after it."""
        current = self.current
        table = current.table if current is not None else None
        return with_clock(apply(table, envelope), current, self._idle)

    def _apply(self, envelope: epb.EventEnvelope) -> None:
        current = self.current
        if (
            current is not None
            and envelope.previous_hash
            and current.envelope.hash
            and envelope.previous_hash != current.envelope.hash
        ):
            self._broken = True  # not applied: the feed's task closes the feed (rewound)
            self.request_catch_up()
            return
        entry = self._entry(envelope)
        if self.current is not None:
            self.current.supersede()  # legal actions only in the newest view
        self.current = entry
        self.history.append(entry)

    # -- watchers ---------------------------------------------------------------
    @property
    def watched(self) -> bool:
        """Whether any stream here watches the table."""
        return (
            self.seats.watched
            or self.audience.watched
            or any(crowd.watched for crowd in self.crowds)
        )


class FeedHub:
    """The feeds of this gateway, by table: created on first use, dropped when idle."""

    def __init__(
        self, tables: TablePort, subjects: Subjects, idle: IdleRules | None = None
    ) -> None:
        self._tables = tables
        self._idle = idle
        self._subjects = subjects
        self._feeds: dict[str, TableFeed] = {}
        self._starting: dict[str, asyncio.Future[TableFeed]] = {}
        self.client: Client | None = None

    @property
    def tables(self) -> TablePort:
        return self._tables

    def following(self, table_id: str) -> TableFeed | None:
        """The table's feed if this gateway follows it (not counted as a use)."""
        feed = self._feeds.get(table_id)
        if feed is not None and feed.closed:  # rewound: the next use starts a new one
            del self._feeds[table_id]
            FEEDS.set(len(self._feeds))
            return None
        return feed

    def existing(self, table_id: str) -> TableFeed | None:
        feed = self.following(table_id)
        if feed is not None:
            feed.touch()
        return feed

    async def feed(self, table_id: str) -> TableFeed:
        """The table's feed, started if needed (NOT_FOUND for an unknown table)."""
        feed = self.existing(table_id)
        if feed is not None:
            return feed
        starting = self._starting.get(table_id)
        if starting is not None:
            return await asyncio.shield(starting)
        future: asyncio.Future[TableFeed] = asyncio.get_running_loop().create_future()
        self._starting[table_id] = future
        try:
            feed = TableFeed(table_id, self._tables, self._subjects.table(table_id), self._idle)
            await feed.start(self.client)
            self._feeds[table_id] = feed
            FEEDS.set(len(self._feeds))
            future.set_result(feed)
            return feed
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" warning
            raise
        finally:
            del self._starting[table_id]

    def nudge(
        self, table_id: str, version: int, committed: Sequence[epb.EventEnvelope] = ()
    ) -> None:
        """A command through this gateway reached ``version``: make sure watchers get there.

        ``committed``: the events it committed, shown to the watchers at once.
        """
        feed = self.following(table_id)
        if feed is None:
            return
        feed.offer(committed)
        if feed.version >= version:
            return

        def check() -> None:
            if not feed.closed and feed.version < version:
                feed.request_catch_up()

        asyncio.get_running_loop().call_later(NUDGE_SECONDS, check)

    def refused(self, table_id: str, error: ServiceError) -> None:
        """A command through this gateway was refused by the table: check the table's feed
        (see :meth:`TableFeed.check`), unless the refusal names a version at or past the
        feed's (the table moved on: a race, not a loss)."""
        feed = self.following(table_id)
        if feed is None or error.status not in REFUSED_ON_STATE:
            return
        named = error.metadata.get("version", "")
        if named.isdigit() and int(named) >= feed.version:
            return
        feed.check()

    async def attach(self, client: Client) -> None:
        """NATS is (back) up: every feed subscribes and catches up."""
        self.client = client
        for feed in list(self._feeds.values()):
            feed.unsubscribed()
            with contextlib.suppress(Exception):
                await feed.subscribe(client)

    def detach(self) -> None:
        """NATS is gone: feeds poll the store until it is back."""
        for feed in self._feeds.values():
            feed.unsubscribed()

    async def maintain(self) -> None:
        """Background: poll feeds that may have missed messages, drop idle ones."""
        while True:
            await asyncio.sleep(POLL_SECONDS_WITHOUT_NATS)
            now = time.monotonic()
            for table_id, feed in list(self._feeds.items()):
                if feed.closed:  # rewound
                    self.following(table_id)
                elif not feed.watched and now - feed.last_used > IDLE_SECONDS:
                    del self._feeds[table_id]
                    FEEDS.set(len(self._feeds))
                    await feed.close()
                elif not feed.subscribed:
                    feed.request_catch_up()
                elif feed.watched and now - max(feed.last_message, feed.last_poll) > POLL_SECONDS:
                    feed.last_poll = now
                    feed.request_catch_up()

    async def close(self) -> None:
        for feed in list(self._feeds.values()):
            await feed.close()
        self._feeds.clear()
