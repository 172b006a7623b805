"""The gateway replica's presence counter: one report when a seat's first stream opens and one
when its last closes, the state as it is when a report runs, and failed reports change nothing
else (the table service behind it is a fake of our own port)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from president.servicekit.identity import Identity
from president.services.gateway.streams.presence import Presence

ANN = Identity("ann", "Ann", "guest", "s-1", 2**40)


class Table:
    """Records the reports; holds each one until released."""

    def __init__(self) -> None:
        self.reports: list[tuple[str, bool]] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail = False

    async def report(self, identity: Identity, table_id: str, connected: bool) -> None:
        await self.gate.wait()
        if self.fail:
            raise RuntimeError("the table service is away")
        self.reports.append((table_id, connected))


async def stream(opened: asyncio.Event, done: asyncio.Event) -> AsyncIterator[int]:
    opened.set()
    yield 1
    await done.wait()


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_the_first_open_and_the_last_close_are_reported_once() -> None:
    table = Table()
    presence = Presence(table.report)
    done = asyncio.Event()

    async def follow() -> None:
        async for _ in presence.follow(ANN, "t1", stream(asyncio.Event(), done)):
            pass

    tasks = [asyncio.create_task(follow()) for _ in range(3)]
    await settle()
    assert presence.connected("t1", "ann")
    assert table.reports == [("t1", True)]
    done.set()
    await asyncio.gather(*tasks)
    await settle()
    assert table.reports == [("t1", True), ("t1", False)]
    assert not presence.connected("t1", "ann")


async def test_a_quick_close_and_reopen_ends_with_what_is_true() -> None:
    table = Table()
    table.gate.clear()  # the first report is slow
    presence = Presence(table.report)
    first, second = asyncio.Event(), asyncio.Event()
    first.set()
    async for _ in presence.follow(ANN, "t1", stream(asyncio.Event(), first)):
        pass  # opened and closed while the report of its opening waits
    reopened = presence.follow(ANN, "t1", stream(asyncio.Event(), second))
    assert await anext(reopened) == 1
    table.gate.set()
    await settle()
    assert table.reports[-1] == ("t1", True)  # one stream is open now
    second.set()
    async for _ in reopened:
        pass
    await settle()
    assert table.reports[-1] == ("t1", False)


async def test_a_failed_report_ends_no_stream() -> None:
    table = Table()
    table.fail = True
    presence = Presence(table.report)
    done = asyncio.Event()
    done.set()
    items = [item async for item in presence.follow(ANN, "t1", stream(asyncio.Event(), done))]
    await settle()
    assert items == [1] and table.reports == []
