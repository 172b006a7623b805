"""Whether this replica reaches its store: a lease holder that cannot write gives its tables up.

A replica cut from the database but not from NATS would otherwise go on
renewing its leases while every command to its tables fails: they would
stand still for as long as the cut lasts, with another replica idle beside
them (``make cluster-chaos``'s "holder cut from postgres": the 10 s cut's
tables stood still 13.8 s). The probe reads the store every ``every``
seconds, in a thread of its own and one read at a time, so a read that hangs
on a connection cut without a word holds only that thread; the leases hold
and take tables only while the last read that succeeded is younger than the
lease's lifetime (:class:`president.services.table.leases.Leases`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor


class StoreProbe:
    """Reads the store now and then; says whether a read succeeded lately."""

    def __init__(self, read: Callable[[], object], every: float) -> None:
        self._read = read
        self._every = every
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="store-probe")
        self._reading: asyncio.Future[object] | None = None
        #: When a read last succeeded (the start counts: the service just read its store).
        self.last_reached = time.monotonic()

    def reached_within(self, seconds: float) -> bool:
        """Whether a read succeeded in the last ``seconds``."""
        return time.monotonic() - self.last_reached < seconds

    async def run(self) -> None:
        """Read every ``every`` seconds (never two reads at once) until cancelled."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                if self._reading is None or self._reading.done():
                    self._reading = loop.run_in_executor(self._executor, self._read)
                    self._reading.add_done_callback(self._done)
                await asyncio.sleep(self._every)
        finally:
            self._executor.shutdown(wait=False, cancel_futures=True)

    def _done(self, reading: asyncio.Future[object]) -> None:
        if not reading.cancelled() and reading.exception() is None:
            self.last_reached = time.monotonic()
