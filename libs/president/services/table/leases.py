"""Table ownership as leases in a NATS JetStream key-value bucket (opt-in).

One replica serves a table at a time: the key is the table id, the value the
address of the replica holding it. A replica takes a free table's lease at
its first call, renews the leases it holds every third of the time to live,
and deletes them when it stops. A replica that dies stops renewing; its keys
age out of the bucket (its ``ttl``) and the next replica to get a call for
the table takes it over, replaying the stream. A call that reaches a replica
not holding the table is forwarded to the holder.

The lease is for locality (one warm cache, no replicas racing on one
stream), not for safety: every append still carries the expected version,
so two replicas that both believe they hold a table (a partition, a lease
that expired under a paused process) stay correct; one of them gets a
conflict and reloads. When NATS cannot be reached, or the holder does not
answer, the replica serves the call itself.

A replica that cannot reach its store (``store_reached`` says so: a
:class:`~president.services.table.store_probe.StoreProbe`) gives its leases
back at the next renewal and takes none, so another replica serves its
tables within about a third of the lease's lifetime, instead of the tables
standing still for as long as the database is away from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.errors import (
    BadRequestError,
    KeyDeletedError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
)
from nats.js.kv import KeyValue

from president.servicekit import nats as jetstream
from president.servicekit.metrics import LEASES

#: How long a cached answer "that table is held by X" is trusted.
OWNER_CACHE_SECONDS = 1.0
#: A held table with no call for this long is given back (at least five times the ttl).
IDLE_SECONDS = 60.0


@dataclass
class _Held:
    revision: int
    renewed: float
    used: float = 0.0


class Leases:
    """The leases of one replica."""

    def __init__(
        self,
        nats_url: str,
        bucket: str,
        address: str,
        ttl_seconds: float,
        replicas: int = 1,
        store_reached: Callable[[], bool] = lambda: True,
    ) -> None:
        self.address = address
        #: Whether this replica reaches its store now (it holds no lease while it does not).
        self._store_reached = store_reached
        self._store_lost = False
        #: Copies of the bucket in a NATS cluster (the events stream's): with one, the
        #: leases are lost with the one server that holds them.
        self._replicas = replicas
        self._url = nats_url
        self._bucket = bucket
        self._ttl = ttl_seconds
        self._client: Client | None = None
        self._kv: KeyValue | None = None
        self._held: dict[str, _Held] = {}
        self._owners: dict[str, tuple[str, float]] = {}
        self._log: Any = structlog.get_logger()

    async def run(self) -> None:
        """Connect, then renew the held leases until cancelled."""
        self._log = structlog.get_logger().bind(service="table", component="leases")
        delay = 0.2
        while self._kv is None:
            try:
                client, js = await jetstream.connect(self._url, "table-leases")
                self._kv = await self._open_bucket(js)
                self._client = client
                self._log.info("leases ready", bucket=self._bucket, address=self.address)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                self._log.warning("leases unavailable", error=repr(error), retry_in=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
        while True:
            await asyncio.sleep(self._ttl / 3)
            await self._renew()

    async def _open_bucket(self, js: JetStreamContext) -> KeyValue:
        """The bucket with this replica's lifetime and copies: made, or brought to them (a
        bucket made with another lease lifetime or number of copies is updated, not refused)."""
        try:
            return await js.create_key_value(
                bucket=self._bucket, ttl=self._ttl, replicas=self._replicas
            )
        except BadRequestError:  # there, with another configuration
            stream = f"KV_{self._bucket}"
            config = (await js.stream_info(stream)).config
            config.max_age, config.num_replicas = self._ttl, self._replicas
            # NATS keeps the de-duplication window within the age (as create_key_value does)
            config.duplicate_window = min(config.duplicate_window or self._ttl, self._ttl)
            await js.update_stream(config)
            self._log.info(
                "lease bucket updated", bucket=self._bucket, ttl=self._ttl, replicas=self._replicas
            )
            return await js.key_value(self._bucket)

    async def owner(self, table_id: str) -> str:
        """The address that serves the table: this replica's when it holds or takes the lease."""
        held = self._held.get(table_id)
        now = time.monotonic()
        take = self._store_reached()
        if take and held is not None and now - held.renewed < self._ttl * 2 / 3:
            held.used = now
            return self.address
        cached = self._owners.get(table_id)
        if cached is not None and now - cached[1] < OWNER_CACHE_SECONDS:
            return cached[0]
        kv = self._kv
        if kv is None:
            return self.address  # no NATS: serve it here
        try:
            return await self._take_or_find(kv, table_id, now, take)
        except Exception as error:  # KeyValueError, TimeoutError, OSError or another NATS error
            self._log.warning("lease lookup failed", table_id=table_id, error=repr(error))
            return self.address

    def forget(self, table_id: str) -> None:
        """Stop trusting a cached owner (it did not answer)."""
        self._owners.pop(table_id, None)

    async def take_over(self, table_id: str) -> None:
        """The holder does not answer: take its lease now."""
        kv = self._kv
        if kv is None:
            return
        with contextlib.suppress(Exception):
            revision = await kv.put(table_id, self.address.encode())
            now = time.monotonic()
            self._held[table_id] = _Held(revision, now, now)
            self._owners.pop(table_id, None)
            LEASES.labels("taken_over").inc()

    async def release(self, table_ids: list[str]) -> None:
        """Give back the leases of tables this replica no longer serves (evicted ones)."""
        kv = self._kv
        for table_id in table_ids:
            held = self._held.pop(table_id, None)
            self._owners.pop(table_id, None)
            if kv is not None and held is not None:
                with contextlib.suppress(Exception):
                    await kv.delete(table_id, last=held.revision)

    async def close(self) -> None:
        """Give the held leases back, so another replica can take them at once."""
        kv, client = self._kv, self._client
        self._kv, self._client = None, None
        if kv is not None:
            for table_id, held in list(self._held.items()):
                with contextlib.suppress(Exception):
                    await kv.delete(table_id, last=held.revision)
        self._held.clear()
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    async def _take_or_find(
        self, kv: KeyValue, table_id: str, now: float, take: bool = True
    ) -> str:
        """The table's holder; this replica, taking the lease when it is free (or keeping it
        when it is this replica's), unless ``take`` is false (then it holds nothing)."""
        for _ in range(3):
            try:
                entry = await kv.get(table_id)
            except (KeyNotFoundError, KeyDeletedError):
                if not take:
                    return self.address
                try:
                    revision = await kv.create(table_id, self.address.encode())
                except KeyWrongLastSequenceError:
                    continue  # another replica took it first: look again
                self._held[table_id] = _Held(revision, now, now)
                LEASES.labels("taken").inc()
                return self.address
            holder = (entry.value or b"").decode()
            if not take and holder in (self.address, ""):
                self._held.pop(table_id, None)
                return self.address
            if holder == self.address:
                self._held[table_id] = _Held(int(entry.revision or 0), now, now)
                return self.address
            if not holder:  # released: take it
                try:
                    revision = await kv.update(table_id, self.address.encode(), last=entry.revision)
                except KeyWrongLastSequenceError:
                    continue
                self._held[table_id] = _Held(revision, now, now)
                LEASES.labels("taken").inc()
                return self.address
            self._held.pop(table_id, None)
            self._owners[table_id] = (holder, now)
            return holder
        return self.address

    async def _renew(self) -> None:
        kv = self._kv
        if kv is None:
            return
        if not self._store_reached():
            if not self._store_lost:
                self._log.warning(
                    "the store is unreachable: leases given back", held=len(self._held)
                )
            self._store_lost = True
            for table_id, held in list(self._held.items()):
                del self._held[table_id]
                with contextlib.suppress(Exception):
                    await kv.delete(table_id, last=held.revision)
            return
        if self._store_lost:
            self._store_lost = False
            self._log.info("the store is reachable again: leases taken as calls come")
        idle = max(IDLE_SECONDS, self._ttl * 5)
        for table_id, held in list(self._held.items()):
            try:
                if time.monotonic() - held.used > idle:
                    del self._held[table_id]
                    await kv.delete(table_id, last=held.revision)
                    continue
                revision = await kv.update(table_id, self.address.encode(), last=held.revision)
                self._held[table_id] = _Held(revision, time.monotonic(), held.used)
            except KeyWrongLastSequenceError:
                self._held.pop(table_id, None)  # taken over: forward from now on
                LEASES.labels("lost").inc()
                self._log.info("lease lost", table_id=table_id)
            except Exception as error:
                self._log.warning("lease renewal failed", table_id=table_id, error=repr(error))
