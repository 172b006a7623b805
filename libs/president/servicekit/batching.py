"""Taking what is ready together: one stream message for several items.

On a gRPC stream a message costs far more than its size, so a writer sends
what has queued up meanwhile in one message. Nothing waits for more to come:
a lone item goes at once.
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

T = TypeVar("T")


def take_ready(first: T, queue: asyncio.Queue[T | None]) -> tuple[list[T], bool]:
    """``first`` and every item queued behind it already; and whether the end (None) came."""
    ready = [first]
    while not queue.empty():
        queued = queue.get_nowait()
        if queued is None:
            return ready, True
        ready.append(queued)
    return ready, False
