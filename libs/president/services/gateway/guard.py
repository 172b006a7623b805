"""A long-lived stream that lasts only as long as the identity that opened it.

A ``Watch`` or ``Session`` stream is opened with a verified identity, and
rights are never read once for all: :func:`while_valid` checks the identity
(expiry, revocation) before each item it passes on and at least every
:data:`RECHECK_SECONDS` while the stream is quiet, and ends the stream with
the check's refusal (UNAUTHENTICATED, TOKEN_EXPIRED or SESSION_REVOKED).
The client refreshes its token and opens a new stream. A stream that has a
queue of its own (the Session) reads it with :func:`checked_get` instead, and
saves :func:`while_valid`'s hop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

T = TypeVar("T")
Q = TypeVar("Q")
#: How often a quiet stream re-checks its identity.
RECHECK_SECONDS = 1.0
#: Items waiting between the stream and its reader (the stream's own queue keeps the rest).
_WAITING = 1


async def checked_get(
    queue: asyncio.Queue[Q], check: Callable[[], None], recheck: float = RECHECK_SECONDS
) -> Q:
    """The queue's next item, ``check()`` passing before it and at least every ``recheck``
    seconds while the queue is empty (its refusal is raised)."""
    if not queue.empty():  # ready: no timer to arm
        item = queue.get_nowait()
        check()
        return item
    while True:
        try:
            async with asyncio.timeout(recheck):
                item = await queue.get()
        except TimeoutError:
            check()
            continue
        check()
        return item


class _End:
    """The stream ended (with an error, or none)."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


async def while_valid(
    items: AsyncIterator[T], check: Callable[[], None], recheck: float = RECHECK_SECONDS
) -> AsyncIterator[T]:
    """``items`` while ``check()`` passes; its refusal ends the stream."""
    check()
    waiting: asyncio.Queue[T | _End] = asyncio.Queue(_WAITING)

    async def pump() -> None:
        try:
            async for item in items:
                await waiting.put(item)
        except Exception as error:
            await waiting.put(_End(error))
        else:
            await waiting.put(_End())

    task = asyncio.create_task(pump(), name="identity-guarded-stream")
    try:
        while True:
            item = await checked_get(waiting, check, recheck)
            if isinstance(item, _End):
                if item.error is not None:
                    raise item.error
                return
            yield item
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
