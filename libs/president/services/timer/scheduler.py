"""Sleeps until the soonest deadline, then asks the table to act (TableService.Timeout; for a
table waiting between rounds or with nobody left, its ``MoveOn`` command).

A deadline is sent once: after the table's answer it is held until the
table's events replace it. The table answers ABORTED (STALE) or
FAILED_PRECONDITION when it moved on — nothing to do; NOT_FOUND when the
table is gone — it is dropped; anything else is retried with backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

import structlog

from president.hosting.deadlines import MOVE_ON_KINDS, Deadline
from president.servicekit.metrics import DEADLINES_FIRED
from president.servicekit.table_client import TimeoutResult
from president.services.timer.deadlines import Clocks

MAX_IN_FLIGHT = 64
#: A failed deadline is tried again soon (a restarted table, dealer or database is back
#: within seconds): after 0.2 s, doubling up to a second apart for the first
#: ``QUICK_RETRIES`` tries (about eight seconds), then doubling again up to
#: ``MAX_RETRY_SECONDS`` apart, so a peer that stays down is not asked in a hot loop.
FIRST_RETRY_SECONDS = 0.2
QUICK_RETRY_SECONDS = 1.0
QUICK_RETRIES = 10
MAX_RETRY_SECONDS = 10.0
IDLE_WAKE_SECONDS = 30.0

log = structlog.get_logger(service="timer")


class TimeoutPort(Protocol):
    """The table, as the scheduler sees it."""

    async def timeout(
        self, table_id: str, timer_key: int, game_no: int, round_no: int
    ) -> tuple[TimeoutResult, str]:
        """Ask the table to act on an expired timer."""

    async def move_on(
        self, table_id: str, kind: str, timer_key: int, game_no: int, round_no: int
    ) -> tuple[TimeoutResult, str]:
        """Ask a table that waited too long to move on by itself."""


def utc_now() -> datetime:
    return datetime.now(UTC)


def retry_delay(attempts: int) -> float:
    """The seconds before a deadline that failed ``attempts`` times (1 or more) is sent again."""
    if attempts <= QUICK_RETRIES:
        return min(FIRST_RETRY_SECONDS * 2.0 ** (attempts - 1), QUICK_RETRY_SECONDS)
    return min(QUICK_RETRY_SECONDS * 2.0 ** (attempts - QUICK_RETRIES), MAX_RETRY_SECONDS)


#: After the board changed, wait this long for more changes before looking again.
COALESCE_SECONDS = 0.02


class Scheduler:
    """Fires the board's deadlines through a :class:`TimeoutPort`."""

    def __init__(
        self,
        clocks: Clocks,
        table: TimeoutPort,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self._clocks = clocks
        self._table = table
        self._now = now
        self.changed = asyncio.Event()
        self.ready = asyncio.Event()
        # Table id -> (deadline key sent or in flight, when to retry it or None).
        self._held: dict[str, tuple[tuple[str, int, int, int, str], datetime | None]] = {}
        self._attempts: dict[tuple[str, int, int, int, str], int] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(MAX_IN_FLIGHT)

    def notify(self) -> None:
        """The board changed: look again."""
        self.changed.set()

    async def run(self) -> None:
        """Fire deadlines forever (once the stream has been replayed)."""
        await self.ready.wait()
        try:
            while True:
                self.changed.clear()
                wait = self._fire_due()
                if wait is not None and wait <= 0:
                    await asyncio.sleep(0)  # let in-flight calls run before looking again
                    continue
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait or IDLE_WAKE_SECONDS):
                        await self.changed.wait()
                if self.changed.is_set():
                    # A busy stream changes the board with every event: let a burst
                    # land, then look once (a deadline fires at most this much late).
                    await asyncio.sleep(COALESCE_SECONDS)
        finally:
            for task in list(self._tasks):
                task.cancel()

    def _fire_due(self) -> float | None:
        """Start every due deadline; the seconds until the next one (None: none is held)."""
        board = self._clocks.board
        now = self._now()
        self._release(now)
        skip = {key for key, _ in self._held.values()}
        next_wait: float | None = None
        while True:
            due = board.next(skip)
            if due is None:
                break
            wait = (due.expires_at - now).total_seconds()
            if wait > 0:
                next_wait = wait
                break
            self._held[due.table_id] = (due.key, None)
            skip.add(due.key)
            task = asyncio.create_task(self._fire(due))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        retries = [
            (retry_at - now).total_seconds() for _, retry_at in self._held.values() if retry_at
        ]
        if retries:
            soonest = max(min(retries), 0.0)
            next_wait = soonest if next_wait is None else min(next_wait, soonest)
        return next_wait

    def _release(self, now: datetime) -> None:
        """Forget holds whose deadline was replaced, and free retries whose time came."""
        board = self._clocks.board
        for table_id, (key, retry_at) in list(self._held.items()):
            current = board.get(table_id)
            if current is None or current.key != key:
                del self._held[table_id]
                self._attempts.pop(key, None)
            elif retry_at is not None and retry_at <= now:
                del self._held[table_id]

    async def _fire(self, due: Deadline) -> None:
        async with self._slots:
            try:
                if due.kind in MOVE_ON_KINDS:
                    result, detail = await self._table.move_on(
                        due.table_id, due.kind, due.timer_key, due.game_no, due.round_no
                    )
                else:
                    result, detail = await self._table.timeout(
                        due.table_id, due.timer_key, due.game_no, due.round_no
                    )
            except Exception as error:  # a broken channel: retry like UNAVAILABLE
                result, detail = TimeoutResult.RETRY, repr(error)
        fields = {
            "table_id": due.table_id,
            "kind": due.kind,
            "timer_key": due.timer_key,
            "game_no": due.game_no,
            "round_no": due.round_no,
            "detail": detail,
        }
        DEADLINES_FIRED.labels(due.kind, result.value).inc()
        if result is TimeoutResult.ACTED:
            log.info("timeout acted", **fields)
        elif result is TimeoutResult.STALE:
            log.info("timeout stale", **fields)
        elif result is TimeoutResult.GONE:
            log.warning("table gone", **fields)
            self._clocks.forget(due.table_id)
        elif result is TimeoutResult.REFUSED:
            log.error("timeout refused", **fields)
        else:
            attempts = self._attempts.get(due.key, 0) + 1
            self._attempts[due.key] = attempts
            delay = retry_delay(attempts)
            log.warning("timeout failed, retrying", attempts=attempts, delay=delay, **fields)
            held = self._held.get(due.table_id)
            if held is not None and held[0] == due.key:
                self._held[due.table_id] = (due.key, self._now() + timedelta(seconds=delay))
        self.notify()
