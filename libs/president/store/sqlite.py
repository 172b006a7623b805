"""The SQLite backend: one writer at a time, queued in this process, sharing commits.

SQLite lets one writer in at a time, and its busy handler makes a waiting
writer sleep in steps of up to 100 ms: under many writers that became
seconds of tail latency. So this process's writers queue on a lock of the
store instead, and one-statement appends that queue meanwhile commit
together (``president.store.group_commit``: one disk flush for all).

Every SQLite row is in transaction 0 and row ids follow the commit order
(writers take turns), so the global order is the rowid order, and a search
on the rowid alone is what SQLite does fast. ``BEGIN IMMEDIATE`` (see
``president.store.engine``) is the consumers' lock.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.sql.elements import ColumnElement

from president.store.group_commit import GroupCommit
from president.store.records import Position
from president.store.schema import events as events_table


class SQLiteBackend:
    """What the store does its own way on SQLite."""

    def __init__(self, engine: Engine) -> None:
        self.writers: AbstractContextManager[Any] = threading.RLock()
        self.group_commit: GroupCommit | None = GroupCommit(engine, self.writers)
        self.insert_dialect = engine.dialect
        self.insert_committed = self.group_commit.run
        self.global_order: tuple[ColumnElement[Any], ...] = (events_table.c.id,)

    def committed_after(self, start: Position) -> tuple[ColumnElement[bool], ...]:
        return (events_table.c.id > start.id,)

    def committed_between(self, after: Position, last: Position) -> tuple[ColumnElement[bool], ...]:
        return (*self.committed_after(after), events_table.c.id <= last.id)

    def lock_consumer(self, connection: Connection, consumer: str) -> None:
        """Nothing to take: ``BEGIN IMMEDIATE`` already lets one writer in at a time."""

    def close(self) -> None:
        """Nothing beyond the store's engine."""
