"""Group commit for SQLite appends: the appends that queued meanwhile share one commit.

SQLite lets one writer in at a time, and with ``synchronous=FULL`` each commit
waits for the disk. With many tables appending at once, each append waited
for every commit before it, one disk flush each. Here an append that finds
the writer busy queues; when the writer is free, the first append in the
queue commits every queued one in one ``BEGIN IMMEDIATE`` ... ``COMMIT``,
one flush for all. Each insert runs in its own savepoint, so one that is
refused (another append took the version, or the command id) fails alone
and the others commit. Nothing waits for a batch to fill: a batch is what
queued while the previous commit ran, so a lone append commits at once, as
before.

Every append still commits before its caller returns: durability is what it
was, one transaction later at most.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError, StatementError

Statement = tuple[str, Any]
"""SQL and its parameters, ready for the DBAPI cursor."""


class _Pending:
    """One append waiting for a commit."""

    __slots__ = ("done", "error", "leads", "rows", "statement")

    def __init__(self, statement: Statement) -> None:
        self.statement = statement
        self.done = threading.Event()
        self.leads = False  # woken to commit the queue, not with an outcome
        self.rows: list[Any] | None = None
        self.error: BaseException | None = None

    def outcome(self) -> list[Any]:
        if self.error is not None:
            raise self.error
        assert self.rows is not None
        return self.rows


class GroupCommit:
    """Runs SQLite insert statements, each committed, sharing commits between threads."""

    def __init__(self, engine: Engine, writers: AbstractContextManager[Any]) -> None:
        """``writers`` is the store's writer lock: held while a group commits."""
        self._engine = engine
        self._writers = writers
        self._mutex = threading.Lock()
        self._queue: list[_Pending] = []
        self._busy = False
        #: How many commits and how many statements went through (for tests and benches).
        self.commits = 0
        self.statements = 0

    @property
    def idle(self) -> bool:
        """No append is committing or waiting to."""
        with self._mutex:
            return not self._busy and not self._queue

    @property
    def waiting(self) -> int:
        """Appends queued for the next commit."""
        with self._mutex:
            return len(self._queue)

    def run(self, statement: Statement) -> list[Any]:
        """Execute ``statement`` and commit it; return the rows it returned, sorted.

        Raises SQLAlchemy's ``DBAPIError`` subclasses (``IntegrityError`` and
        so on), as a Connection would, and nothing of the statement is kept.
        """
        pending = _Pending(statement)
        with self._mutex:
            self._queue.append(pending)
            leading = not self._busy
            self._busy = True
        if not leading:
            pending.done.wait()
            if not pending.leads:
                return pending.outcome()
        self._commit_queue()
        return pending.outcome()

    def _commit_queue(self) -> None:
        with self._mutex:
            group, self._queue = self._queue, []
        try:
            with self._writers:
                self._commit(group)
        except BaseException as error:
            for pending in group:
                if pending.rows is None and pending.error is None:
                    pending.error = error
            raise
        finally:
            with self._mutex:
                successor = self._queue[0] if self._queue else None
                if successor is None:
                    self._busy = False
                else:
                    successor.leads = True
            for pending in group:
                pending.done.set()
            if successor is not None:
                successor.done.set()

    def _commit(self, group: Sequence[_Pending]) -> None:
        engine = self._engine
        dbapi_error = engine.dialect.loaded_dbapi.Error

        def wrap(pending: _Pending, error: Exception) -> StatementError:
            return DBAPIError.instance(*pending.statement, error, dbapi_error)

        pooled = engine.raw_connection()
        cursor = None
        try:
            cursor = pooled.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            alone = len(group) == 1
            for pending in group:
                if not alone:
                    cursor.execute("SAVEPOINT append")
                try:
                    cursor.execute(*pending.statement)
                    pending.rows = sorted(cursor.fetchall())
                except dbapi_error as error:
                    pending.error = wrap(pending, error)
                    if alone:
                        raise
                    cursor.execute("ROLLBACK TO append")
                if not alone:
                    cursor.execute("RELEASE append")
            pooled.commit()
            self.commits += 1
            self.statements += len(group)
        except dbapi_error as error:
            if engine.dialect.is_disconnect(error, pooled, cursor):
                pooled.invalidate(error)
            else:
                try:
                    pooled.rollback()
                except dbapi_error:
                    pooled.invalidate(error)
            for pending in group:  # nothing of the group was kept
                pending.rows = None
                if pending.error is None:
                    pending.error = wrap(pending, error)
        finally:
            if cursor is not None:
                cursor.close()
            pooled.close()
