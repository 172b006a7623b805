"""What differs between the store's databases, as one small object chosen once per store.

The levels of the store (streams, the global log, tracking) are written once;
where SQLite and PostgreSQL differ, they ask the store's ``Backend``:
how this process's writers take turns, how a one-statement insert commits,
which events are committed after a position (the global order), and how a
consumer's lock is taken. ``backend_for`` picks the implementation
(``president.store.sqlite`` or ``president.store.postgres``) from the engine.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

from sqlalchemy import Connection, Engine
from sqlalchemy.engine import URL, Dialect
from sqlalchemy.sql.elements import ColumnElement

from president.store.group_commit import GroupCommit, Statement
from president.store.postgres import PostgresBackend, autocommit_engine
from president.store.records import Position
from president.store.sqlite import SQLiteBackend


class Backend(Protocol):
    """The database-specific part of an event store."""

    @property
    def writers(self) -> AbstractContextManager[Any]:
        """Held by this process's writers around each write transaction."""
        ...

    @property
    def group_commit(self) -> GroupCommit | None:
        """The group commit one-statement appends go through, if this backend has one."""
        ...

    @property
    def insert_dialect(self) -> Dialect:
        """The dialect ``insert_committed`` runs SQL of."""
        ...

    def insert_committed(self, statement: Statement, /) -> list[Any]:
        """Run a one-statement insert and commit it; its returned rows, sorted.

        Raises SQLAlchemy's ``DBAPIError`` subclasses (``IntegrityError`` ...);
        nothing of the statement is kept then.
        """
        ...

    def committed_after(self, start: Position) -> tuple[ColumnElement[bool], ...]:
        """Conditions on ``events`` rows: committed and after ``start`` in the global order."""
        ...

    def committed_between(self, after: Position, last: Position) -> tuple[ColumnElement[bool], ...]:
        """Conditions on ``events`` rows: committed, after ``after``, at or before ``last``."""
        ...

    @property
    def global_order(self) -> tuple[ColumnElement[Any], ...]:
        """The ``ORDER BY`` of the global order."""
        ...

    def lock_consumer(self, connection: Connection, consumer: str) -> None:
        """In the open transaction of ``connection``, wait for ``consumer``'s lock."""
        ...

    def close(self) -> None:
        """Release what the backend holds beyond the store's engine."""
        ...


def backend_for(engine: Engine, autocommit_engine: Engine | None = None) -> Backend:
    """The backend of the database ``engine`` talks to."""
    if engine.dialect.name == "postgresql":
        return PostgresBackend(engine, autocommit_engine)
    return SQLiteBackend(engine)


def extra_engine_for(engine: Engine, url: str | URL, **engine_options: Any) -> Engine | None:
    """The second engine ``from_url`` gives the store for ``engine``'s database, if any."""
    if engine.dialect.name == "postgresql":
        return autocommit_engine(url, **engine_options)
    return None
