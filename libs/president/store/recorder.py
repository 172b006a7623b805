"""What every level of the event store stands on: the engine, its backend, short reads.

The store is built as a ladder, after pyeventsourcing's recorders: streams
(``president.store.streams``), the global log on top (``president.store.log``),
consumer tracking on top of that (``president.store.tracking``), and
``EventStore`` (``president.store.store``) as the one class callers use.
``Recorder`` is the bottom rung: it chooses the database's ``Backend`` once,
and gives each level its read transactions and the events table's rows as
``StoredEvent`` values.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import MappingProxyType, TracebackType
from typing import Any, Self

from sqlalchemy import Connection, Engine, Row

from president.store.backends import Backend, backend_for
from president.store.group_commit import GroupCommit
from president.store.records import Position, StoredEvent, json_object
from president.store.schema import events as events_table

MAX_ID_LENGTH = 200
"""The longest stream id, command id or consumer name."""

EVENT_COLUMNS = (
    events_table.c.stream_id,
    events_table.c.version,
    events_table.c.type,
    events_table.c.payload,
    events_table.c.metadata,
    events_table.c.tx_id,
    events_table.c.id,
    events_table.c.hash,
    events_table.c.previous_hash,
)
"""The columns ``stored_event`` reads."""


class Recorder:
    """An engine on the store's database, and the backend that knows that database."""

    def __init__(self, engine: Engine, autocommit_engine: Engine | None = None) -> None:
        """Use ``engine`` (see ``create_store_engine``); ``EventStore.from_url`` is the usual door.

        On PostgreSQL, appends that are one statement run on ``autocommit_engine``
        if given (an engine on the same database with
        ``isolation_level="AUTOCOMMIT"`` and its own pool), which saves the
        BEGIN and COMMIT round trips; otherwise on ``engine``, in a transaction.
        """
        self._engine = engine
        self._backend: Backend = backend_for(engine, autocommit_engine)
        # This process's writers take turns here (a real lock on SQLite only).
        self._writers = self._backend.writers

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (for tests and for consumers' own tables)."""
        return self._engine

    @property
    def group_commit(self) -> GroupCommit | None:
        """SQLite: the group commit its appends go through (None on PostgreSQL)."""
        return self._backend.group_commit

    def close(self) -> None:
        """Close every pooled connection."""
        self._engine.dispose()
        self._backend.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        with (
            self._engine.connect().execution_options(sqlite_begin="DEFERRED") as connection,
            connection.begin(),
        ):
            yield connection


def check_id(what: str, value: str) -> None:
    """Refuse a ``what`` (stream id, command id, consumer name) that is no id."""
    if not isinstance(value, str):
        raise TypeError(f"a {what} is a string, got {type(value).__name__}")
    if not value or len(value) > MAX_ID_LENGTH:
        raise ValueError(f"a {what} has 1 to {MAX_ID_LENGTH} characters, got {value!r}")


def stored_event(row: Row[*tuple[Any, ...]]) -> StoredEvent:
    """The event of an ``events`` row read with ``EVENT_COLUMNS``."""
    return StoredEvent(
        stream_id=row.stream_id,
        version=int(row.version),
        type=row.type,
        payload=bytes(row.payload),
        metadata=MappingProxyType(json_object(row.metadata)),
        position=Position(int(row.tx_id), int(row.id)),
        hash=row.hash,
        previous_hash=row.previous_hash,
    )
