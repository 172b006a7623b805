"""Presence at this gateway replica: which accounts have a Watch or Session stream open
at which table, reported to the table service when that changes.

Each replica counts only its own streams and reports, under its own id, a
seat's first stream opening and its last closing (``SetPresence``); the table
counts a seat connected while any replica reports it so
(:mod:`president.hosting.presence`). Reports run beside the streams (a closing
stream does not wait for one), one at a time per table and account, and each
sends the state the count has when it runs, so a quick close and reopen ends
with what is true. A report that fails (the account holds no seat, the table
service is away) changes nothing and is only logged: presence is advice for
the takeover timer, and a seat nobody reports away keeps its full turn timer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import structlog

from president.servicekit.identity import Identity

T = TypeVar("T")
#: Report ``connected`` for the identity's seat at a table (raising when it cannot).
Report = Callable[[Identity, str, bool], Awaitable[None]]
_log: Any = structlog.get_logger(service="gateway")


class Presence:
    """The streams open at this replica per table and account, and their reports."""

    def __init__(self, report: Report) -> None:
        self._report = report
        self._open: dict[tuple[str, str], int] = {}
        self._reported: dict[tuple[str, str], bool] = {}
        #: The one report task per table and account that runs now.
        self._pumps: dict[tuple[str, str], asyncio.Task[None]] = {}

    async def follow(
        self, identity: Identity, table_id: str, stream: AsyncIterator[T]
    ) -> AsyncIterator[T]:
        """``stream``, counted as one open stream of the identity's account at the table."""
        account = identity.account_id
        key = (table_id, account) if account else None
        if key is not None:
            self._open[key] = self._open.get(key, 0) + 1
            self._sync(identity, key)
        try:
            async for item in stream:
                yield item
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
            if key is not None:
                self._open[key] -= 1
                self._sync(identity, key)

    def connected(self, table_id: str, account: str) -> bool:
        """Whether the account has a stream open at the table here."""
        return self._open.get((table_id, account), 0) > 0

    def _sync(self, identity: Identity, key: tuple[str, str]) -> None:
        """Report the key's state soon (the running report, if any, sees it when it ends)."""
        if key not in self._pumps:
            self._pumps[key] = asyncio.get_running_loop().create_task(self._pump(identity, key))

    async def _pump(self, identity: Identity, key: tuple[str, str]) -> None:
        try:
            while (now := self._open.get(key, 0) > 0) != self._reported.get(key, False):
                try:
                    await self._report(identity, key[0], now)
                except Exception as error:  # advice only: log and go on
                    _log.info("presence not reported", table_id=key[0], error=repr(error))
                    return
                self._reported[key] = now
        finally:
            del self._pumps[key]
            if not self._open.get(key):  # nothing open, nothing to report: forget the key
                self._open.pop(key, None)
                if not self._reported.get(key):
                    self._reported.pop(key, None)
