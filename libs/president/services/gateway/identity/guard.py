"""A long-lived stream that lasts only as long as the identity that opened it.

A ``Watch`` or ``Session`` stream is opened with a verified identity, and
rights are never read once for all: the stream checks the identity
(expiry, revocation) after each wait for what it sends next, and at least
every :data:`RECHECK_SECONDS` while the table is quiet
(:func:`checked_wait`; the Session reads its queue with :func:`checked_get`),
and ends with the check's refusal (UNAUTHENTICATED, TOKEN_EXPIRED or
SESSION_REVOKED). The client refreshes its token and opens a new stream. The
check runs in the stream's own task: no hop between tasks per message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

Q = TypeVar("Q")
#: How often a quiet stream re-checks its identity.
RECHECK_SECONDS = 1.0


async def checked_wait(
    wait: Callable[[], Awaitable[Q]], check: Callable[[], None], recheck: float = RECHECK_SECONDS
) -> Q:
    """What ``wait()`` brings, ``check()`` passing after it and at least every ``recheck``
    seconds while it waits (its refusal is raised). ``wait`` is called again after each
    recheck, so it must lose nothing when cancelled (a queue's get, a watcher's take)."""
    while True:
        try:
            async with asyncio.timeout(recheck):
                item = await wait()
        except TimeoutError:
            check()
            continue
        check()
        return item


async def checked_get(
    queue: asyncio.Queue[Q], check: Callable[[], None], recheck: float = RECHECK_SECONDS
) -> Q:
    """The queue's next item, ``check()`` passing before it and at least every ``recheck``
    seconds while the queue is empty (its refusal is raised)."""
    if not queue.empty():  # ready: no timer to arm
        item = queue.get_nowait()
        check()
        return item
    return await checked_wait(queue.get, check, recheck)
