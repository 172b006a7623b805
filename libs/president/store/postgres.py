"""The PostgreSQL backend: a global order that waits for running transactions; no table lock.

Each row records its writing transaction's id (``tx_id``), and the global
order is ``(tx_id, id)``. Only rows of transactions older than the oldest one
still running count as committed: every later commit lands after them, so a
follower never skips an event, and no append takes a table lock.

One-statement appends run autocommitted on an engine of their own (no BEGIN
and COMMIT round trips); a consumer's lock is an advisory lock, which (unlike
``SELECT ... FOR UPDATE``) gives the transaction no id, so a handler that has
not written yet holds back no follower.
"""

from __future__ import annotations

import hashlib
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from sqlalchemy import BigInteger, Connection, Engine, literal_column, select, text, tuple_
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.elements import ColumnClause, ColumnElement

from president.store.engine import create_store_engine
from president.store.group_commit import GroupCommit, Statement
from president.store.records import Position
from president.store.schema import events as events_table

# Every transaction older than this one has ended (committed or not).
_VISIBLE_BELOW: ColumnClause[int] = literal_column(
    "pg_snapshot_xmin(pg_current_snapshot())::text::bigint", BigInteger
)
_ADVISORY_LOCK = text("SELECT pg_advisory_xact_lock(:key)")


def autocommit_engine(url: str | URL, **engine_options: Any) -> Engine:
    """An engine on the same database for one-statement appends: autocommit, its own pool."""
    # Nothing to reset on return: no transaction is ever open there.
    return create_store_engine(
        url, **{**engine_options, "isolation_level": "AUTOCOMMIT", "pool_reset_on_return": None}
    )


def lock_key(consumer: str) -> int:
    """The advisory lock key of a consumer (a collision only makes two wait)."""
    digest = hashlib.sha256(f"president.store.tracking:{consumer}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PostgresBackend:
    """What the store does its own way on PostgreSQL."""

    def __init__(self, engine: Engine, autocommit: Engine | None = None) -> None:
        """One-statement appends run on ``autocommit`` if given, else on ``engine``."""
        self.writers: AbstractContextManager[Any] = nullcontext()
        self.group_commit: GroupCommit | None = None
        self._autocommit = autocommit or engine
        self.insert_dialect = self._autocommit.dialect
        self.global_order: tuple[ColumnElement[Any], ...] = (
            events_table.c.tx_id,
            events_table.c.id,
        )

    def insert_committed(self, statement: Statement) -> list[Any]:
        """Run ``statement`` on a pooled DBAPI connection, committed; its rows, sorted."""
        engine = self._autocommit
        pooled = engine.raw_connection()
        autocommitted = bool(pooled.driver_connection.autocommit)  # type: ignore[union-attr]
        cursor = None
        try:
            cursor = pooled.cursor()
            cursor.execute(*statement)
            returned = sorted(cursor.fetchall())
            if not autocommitted:
                pooled.commit()
        except engine.dialect.loaded_dbapi.Error as error:
            if engine.dialect.is_disconnect(error, pooled, cursor):
                pooled.invalidate(error)
            elif not autocommitted:
                pooled.rollback()
            dbapi_error = engine.dialect.loaded_dbapi.Error
            raise DBAPIError.instance(*statement, error, dbapi_error) from error
        finally:
            if cursor is not None:
                cursor.close()
            pooled.close()
        return returned

    def committed_after(self, start: Position) -> tuple[ColumnElement[bool], ...]:
        return (
            tuple_(events_table.c.tx_id, events_table.c.id) > tuple_(start.transaction, start.id),
            events_table.c.tx_id < select(_VISIBLE_BELOW).scalar_subquery(),
        )

    def committed_between(self, after: Position, last: Position) -> tuple[ColumnElement[bool], ...]:
        return (
            *self.committed_after(after),
            tuple_(events_table.c.tx_id, events_table.c.id) <= tuple_(last.transaction, last.id),
        )

    def lock_consumer(self, connection: Connection, consumer: str) -> None:
        connection.execute(_ADVISORY_LOCK, {"key": lock_key(consumer)})

    def close(self) -> None:
        self._autocommit.dispose()
