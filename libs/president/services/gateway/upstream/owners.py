"""Which table-service replica serves a table: its lease holder, read from the lease bucket.

With leases on (``PRESIDENT_TABLE_LEASE_SECONDS``), one replica serves a
table at a time and the lease's value is its address (see
``services/table/leases.py``, which takes and renews them). The gateway only
reads the bucket, and sends the table's commands straight to the holder: any
other replica would forward them there, one hop more. With no lease yet, no
NATS, or a holder that does not answer, commands go to the table service's
own address, as without leases; a replica there takes the lease or forwards.
"""

from __future__ import annotations

import time
from typing import Any

import structlog
from nats.aio.client import Client
from nats.js.errors import KeyDeletedError, KeyNotFoundError
from nats.js.kv import KeyValue

#: How long a holder read from the bucket is trusted.
OWNER_CACHE_SECONDS = 1.0
#: How often a gateway looks for the bucket while the table services have not made it.
BUCKET_RETRY_SECONDS = 5.0

_log: Any = structlog.get_logger(service="gateway")


class LeaseOwners:
    """Table id → the address of the replica holding its lease (read-only, cached)."""

    def __init__(self, bucket: str) -> None:
        self.bucket = bucket
        self._client: Client | None = None
        self._kv: KeyValue | None = None
        self._looked_for_bucket = 0.0
        self._owners: dict[str, tuple[str | None, float]] = {}

    def attach(self, client: Client) -> None:
        """NATS is connected: read the bucket through ``client`` from now on."""
        self._client, self._kv, self._looked_for_bucket = client, None, 0.0

    async def owner(self, table_id: str) -> str | None:
        """The holder's address, or None (no lease, or no way to know)."""
        now = time.monotonic()
        cached = self._owners.get(table_id)
        if cached is not None and now - cached[1] < OWNER_CACHE_SECONDS:
            return cached[0]
        kv = await self._bucket(now)
        if kv is None:
            return None
        try:
            entry = await kv.get(table_id)
            holder = (entry.value or b"").decode() or None
        except (KeyNotFoundError, KeyDeletedError):
            holder = None
        except Exception as error:  # NATS away or slow: the service address serves
            _log.warning("lease lookup failed", table_id=table_id, error=repr(error))
            return None
        if len(self._owners) > 100_000:
            self._owners.clear()
        self._owners[table_id] = (holder, now)
        return holder

    def forget(self, table_id: str) -> None:
        """The holder did not answer: look again next time."""
        self._owners.pop(table_id, None)

    async def _bucket(self, now: float) -> KeyValue | None:
        if self._kv is not None or self._client is None or self._client.is_closed:
            return self._kv
        if now - self._looked_for_bucket < BUCKET_RETRY_SECONDS:
            return None
        self._looked_for_bucket = now
        try:
            self._kv = await self._client.jetstream().key_value(self.bucket)
        except Exception as error:  # not made yet: the table services make it
            _log.info("no lease bucket yet", bucket=self.bucket, error=repr(error))
        return self._kv
