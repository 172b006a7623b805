"""The costly calls' bound: never more than its slots at once, a freed slot goes to the
waiting keys in turn, and a full queue refuses at once with SERVER_BUSY and a retry hint."""

from __future__ import annotations

import asyncio

import pytest

from president.servicekit.errors import RETRY_AFTER, Code, ServiceError
from president.servicekit.fair_queue import SERVER_BUSY, FairQueue


async def _hold(queue: FairQueue, key: str, order: list[str], go: asyncio.Event) -> None:
    async with queue.slot(key):
        order.append(key)
        assert queue.busy <= queue.slots
        await go.wait()


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_freed_slot_goes_to_the_keys_in_turn_not_to_the_busiest() -> None:
    queue = FairQueue(slots=1, waiting=10, waiting_per_key=10)
    order: list[str] = []
    go = asyncio.Event()
    holder = asyncio.create_task(_hold(queue, "first", order, go))
    await _settle()
    # One address queues three calls, then another address one.
    waiting = [asyncio.create_task(_hold(queue, "flood", order, go)) for _ in range(3)]
    await _settle()
    waiting.append(asyncio.create_task(_hold(queue, "player", order, go)))
    await _settle()
    assert order == ["first"] and queue.queued == 4
    go.set()
    await asyncio.gather(holder, *waiting)
    # The player went second among the waiters, not behind every call of the flood.
    assert order == ["first", "flood", "player", "flood", "flood"]
    assert queue.busy == 0 and queue.queued == 0


async def test_a_full_queue_refuses_at_once_with_a_retry_hint_per_key_and_in_all() -> None:
    queue = FairQueue(slots=2, waiting=3, waiting_per_key=2)
    order: list[str] = []
    go = asyncio.Event()
    running = [asyncio.create_task(_hold(queue, key, order, go)) for key in ("a", "b")]
    await _settle()
    waiting = [asyncio.create_task(_hold(queue, "a", order, go)) for _ in range(2)]
    await _settle()
    with pytest.raises(ServiceError) as per_key:
        async with queue.slot("a"):
            pass
    assert per_key.value.status == Code.RESOURCE_EXHAUSTED
    assert per_key.value.reason == SERVER_BUSY and per_key.value.metadata[RETRY_AFTER] == "1.0"
    waiting.append(asyncio.create_task(_hold(queue, "c", order, go)))
    await _settle()
    with pytest.raises(ServiceError) as in_all:
        async with queue.slot("d"):  # d waits for nothing yet, but the queue is full
            pass
    assert in_all.value.reason == SERVER_BUSY
    assert queue.busy == 2 and queue.queued == 3
    go.set()
    await asyncio.gather(*running, *waiting)
    assert sorted(order) == ["a", "a", "a", "b", "c"]
    assert queue.busy == 0 and queue.queued == 0


async def test_a_waiter_that_goes_away_gives_its_place_back() -> None:
    queue = FairQueue(slots=1, waiting=1, waiting_per_key=1)
    order: list[str] = []
    go = asyncio.Event()
    holder = asyncio.create_task(_hold(queue, "a", order, go))
    await _settle()
    gone = asyncio.create_task(_hold(queue, "b", order, go))
    await _settle()
    gone.cancel()
    await _settle()
    assert queue.queued == 0
    after = asyncio.create_task(_hold(queue, "c", order, go))  # the place is free again
    await _settle()
    go.set()
    await asyncio.gather(holder, after)
    assert order == ["a", "c"] and queue.busy == 0
