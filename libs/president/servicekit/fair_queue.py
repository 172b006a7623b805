"""A bound on costly work under way at once, with a fair, bounded queue per client key.

Some calls cost far more than a play: a password's hash (argon2, a fifth of a
second of a core), a new account, a new guest, a new table. Rate limits per
address do not bound them in all: many addresses, each inside its limits,
can still ask for more at once than the machine has cores, and a real
player's plays wait behind them. :class:`FairQueue` lets ``slots`` such calls
run at once. Another waits in its key's queue (the caller's address), and a
freed slot goes to the keys in turn, one call each, so one address with many
calls waiting takes no more turns than an address with one. A key may have
``waiting_per_key`` calls waiting and all keys ``waiting`` in all; one more
is refused at once, RESOURCE_EXHAUSTED with the reason SERVER_BUSY and a retry
hint (``retry_after_seconds`` and a ``google.rpc.RetryInfo``), nothing done.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from president.servicekit.errors import RETRY_AFTER, Code, ServiceError

SERVER_BUSY = "SERVER_BUSY"
RETRY_SECONDS = 1.0


class FairQueue:
    """At most ``slots`` holders at once; the others wait, served by key in turn."""

    def __init__(self, slots: int, waiting: int, waiting_per_key: int) -> None:
        self.slots = slots
        self.waiting = waiting
        self.waiting_per_key = waiting_per_key
        self.busy = 0
        self._waiters = 0
        #: Each key's waiters in order; the keys in the order they are served.
        self._queues: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    @property
    def queued(self) -> int:
        """How many wait now."""
        return self._waiters

    @asynccontextmanager
    async def slot(self, key: str) -> AsyncIterator[None]:
        """Hold a slot while the block runs, waiting for one in ``key``'s turn; SERVER_BUSY
        when the queue (``key``'s, or all) is full."""
        if self.busy < self.slots and not self._queues:
            self.busy += 1
        else:
            await self._wait(key)
        try:
            yield
        finally:
            self._release()

    async def _wait(self, key: str) -> None:
        queue = self._queues.get(key)
        if self._waiters >= self.waiting or (queue and len(queue) >= self.waiting_per_key):
            raise busy()
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(key, deque()).append(turn)
        self._waiters += 1
        try:
            await turn  # the releaser handed its slot over (``busy`` unchanged)
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._release()  # handed a slot as the caller went away: pass it on
            else:
                self._forget(key, turn)
            raise

    def _forget(self, key: str, turn: asyncio.Future[None]) -> None:
        queue = self._queues.get(key)
        if queue is not None and turn in queue:
            queue.remove(turn)
            self._waiters -= 1
            if not queue:
                del self._queues[key]

    def _release(self) -> None:
        """Hand the slot to the next key's first waiter (that key then goes last), or free it."""
        while self._queues:
            key, queue = next(iter(self._queues.items()))
            turn = queue.popleft()
            self._waiters -= 1
            if queue:
                self._queues.move_to_end(key)
            else:
                del self._queues[key]
            if not turn.done():
                turn.set_result(None)
                return
        self.busy -= 1


def busy() -> ServiceError:
    """The refusal of a call that finds the queue full."""
    return ServiceError(
        Code.RESOURCE_EXHAUSTED,
        SERVER_BUSY,
        "the server has as many sign-ins, new accounts and new tables under way and waiting "
        f"as it takes: try again in {RETRY_SECONDS:.0f} s",
        {RETRY_AFTER: f"{RETRY_SECONDS:.1f}"},
    )
