"""The append fast path: right after a stream head this process knows, one raw INSERT.

An append normally reads its stream's head (version and hash) in a
transaction, then inserts. The store remembers the last event it has seen
committed in each stream (by appending or reading it): an append right after
that event skips the read and inserts in one statement, and the unique
``(stream_id, version)`` index still refuses it if another append got there
first. This relies on the log being append-only: events are never deleted.

The statement runs on a pooled DBAPI connection, skipping SQLAlchemy's
``Connection`` layer (about 60 µs of CPU per append, which is what limits
throughput with many writers); each backend commits it its own way
(``Backend.insert_committed``). Here: the memory of stream heads, and the
statement, compiled once per dialect and row count.
"""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import bindparam, insert
from sqlalchemy.engine import Dialect

from president.store.group_commit import Statement
from president.store.schema import events as events_table

ONE_STATEMENT_ROWS = 100
"""Appends of at most this many events take the fast path (900 parameters, far
from either database's limit)."""

KNOWN_HEADS = 100_000
"""Streams whose head the store remembers; past that it forgets them all and starts over."""

# What an append writes: every column but the two the database sets (``id``, ``tx_id``).
_EVENT_KEYS = tuple(
    column.name for column in events_table.columns if column.name not in ("id", "tx_id")
)


class KnownHeads(dict[str, tuple[int, str]]):
    """Stream id -> (version, hash) of an event known to be committed."""

    def remember(self, stream_id: str, version: int, digest: str) -> None:
        """Note a committed event; appends right after it can skip reading the stream's head."""
        known = self.get(stream_id)
        if known is not None and known[0] >= version:
            return
        if len(self) >= KNOWN_HEADS and stream_id not in self:
            self.clear()
        self[stream_id] = (version, digest)


def insert_statement(dialect: Dialect, rows: list[dict[str, Any]]) -> Statement:
    """The one ``INSERT ... RETURNING version, tx_id, id`` of ``rows``, with its parameters."""
    sql, order = _insert_sql(dialect, len(rows))
    named = {f"{key}_{i}": value for i, row in enumerate(rows) for key, value in row.items()}
    parameters: Any = tuple(named[name] for name in order) if order else named
    return sql, parameters


@functools.lru_cache(maxsize=256)
def _insert_sql(dialect: Dialect, rows: int) -> tuple[str, tuple[str, ...]]:
    """``INSERT INTO events ... VALUES (...) x rows RETURNING version, tx_id, id`` for
    ``dialect``, with parameters named ``<column>_<row>``; and their order if the
    driver takes them by position."""
    statement = insert(events_table).values(
        [{key: bindparam(f"{key}_{i}") for key in _EVENT_KEYS} for i in range(rows)]
    )
    compiled = statement.returning(
        events_table.c.version, events_table.c.tx_id, events_table.c.id
    ).compile(dialect=dialect)
    return str(compiled), tuple(compiled.positiontup or ())
