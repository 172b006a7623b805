"""The table service relays the commitment feed from the store to its public JetStream stream.

The store's feed (:mod:`president.services.table.commitments` appends to it)
lives in the same database an insider can write; its entries also go, as they
are appended, to a JetStream stream anyone may read and archive
(:mod:`president.servicekit.feed_stream`), where the store cannot rewrite them.

The stream is the relay's position: each pass asks it which entry it holds
last and publishes the store's entries after it, each only right after the one
before it (``Nats-Expected-Last-Sequence``) and under its own ``Nats-Msg-Id``.
So after a restart, a crash between a publish and anything else, or with
several table replicas relaying at once, every entry is stored exactly once
and in feed order: a publish another replica got in first is refused, and the
relay asks the stream again. When NATS is down it retries; nothing is lost
meanwhile, the store keeps the feed.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import structlog
from nats.aio.client import Client
from nats.js import JetStreamContext

from president.hosting.signatures import Signer
from president.servicekit import nats as jetstream
from president.servicekit.feed_stream import (
    FeedSubjects,
    ensure_feed_stream,
    publish_entry,
    published_through,
)
from president.store import EventStore
from president.store.commitments import read_feed

#: Entries read from the store per pass.
BATCH = 200
#: How often the relay looks for new entries (seconds).
POLL_SECONDS = 0.5
#: The longest wait between attempts while NATS is down (seconds).
MAX_BACKOFF_SECONDS = 5.0


class FeedStuck(RuntimeError):
    """The store's feed and its stream do not continue each other: nothing more is published
    (the relay says why in its log, and tries again later)."""


class FeedRelay:
    """Publishes the store's commitment feed to its JetStream stream, once, in order."""

    def __init__(
        self,
        store: EventStore,
        subjects: FeedSubjects,
        nats_url: str,
        *,
        poll_seconds: float = POLL_SECONDS,
        name: str = "table-feed-relay",
        signer: Signer | None = None,
    ) -> None:
        self._store = store
        self._signer = signer
        self._subjects = subjects
        self._url = nats_url
        self._poll = poll_seconds
        self._name = name
        self._client: Client | None = None
        self._js: JetStreamContext | None = None
        self._log: Any = structlog.get_logger()
        self.published = 0

    async def publish_pending(self) -> int:
        """Publish every entry of the store's feed the stream does not hold yet; returns how
        many this call stored."""
        js = await self._jetstream()
        stored = 0
        refused_at: int | None = None
        while True:
            through = await published_through(js, self._subjects)
            if through == refused_at:
                raise FeedStuck(f"the feed stream refuses entry {through + 1}, yet holds none")
            entries = await asyncio.to_thread(read_feed, self._store.engine, None, through, BATCH)
            if not entries:
                return stored
            if entries[0].seq != through + 1:
                raise FeedStuck(
                    f"the stream holds entries 1 to {through}, but the store's feed goes on "
                    f"with entry {entries[0].seq}: entries are missing from the store"
                )
            refused_at = None
            for entry in entries:
                if not await publish_entry(js, self._subjects, entry, self._signer):
                    refused_at = entry.seq - 1  # another relay stored it: ask the stream again
                    break
                stored += 1
                self.published += 1

    async def run(self) -> None:
        """Relay until cancelled, retrying with backoff while NATS or the store fails."""
        backoff = self._poll
        while True:
            try:
                await self.publish_pending()
                backoff = self._poll
            except asyncio.CancelledError:
                raise
            except Exception as error:  # NATS or the database away: try again later
                self._log.warning("commitment feed relay failed", error=str(error))
                await self._disconnect()
                backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
            await asyncio.sleep(backoff)

    async def close(self) -> None:
        await self._disconnect()

    async def _jetstream(self) -> JetStreamContext:
        if self._js is None:
            self._client, self._js = await jetstream.connect(self._url, self._name)
            await ensure_feed_stream(self._js, self._subjects)
        return self._js

    async def _disconnect(self) -> None:
        client, self._client, self._js = self._client, None, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()
