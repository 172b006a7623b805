"""The append fast path: right after a stream head this process knows, one raw INSERT.

An append normally reads its stream's head (version and hash) in a
transaction, then inserts. The store remembers the last event it has seen
committed in each stream (by appending or reading it): an append right after
that event skips the read and inserts in one statement, and the unique
``(stream_id, version)`` index still refuses it if another append got there
first. The statement inserts only while that event is still there, with that
hash: after a failover to a PostgreSQL standby that had not received it
(asynchronous replication), the remembered event is gone, the statement
inserts nothing, and the append reads the head as usual (it is then refused
as stale) instead of writing on top of a hole in the stream.

The statement runs on a pooled DBAPI connection, skipping SQLAlchemy's
``Connection`` layer (about 60 µs of CPU per append, which is what limits
throughput with many writers); each backend commits it its own way
(``Backend.insert_committed``). Here: the memory of stream heads, and the
statement, compiled once per dialect and row count.
"""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import and_, bindparam, exists, insert, select, union_all
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
    """The one ``INSERT ... RETURNING version, tx_id, id`` of ``rows``, with its parameters:
    it inserts nothing unless the event before the first row is stored with its hash."""
    sql, order = _insert_sql(dialect, len(rows))
    named = {f"{key}_{i}": value for i, row in enumerate(rows) for key, value in row.items()}
    first = rows[0]
    named["guard_stream"] = first["stream_id"]
    named["guard_version"] = first["version"] - 1
    named["guard_hash"] = first["previous_hash"]
    parameters: Any = tuple(named[name] for name in order) if order else named
    return sql, parameters


@functools.lru_cache(maxsize=256)
def _insert_sql(dialect: Dialect, rows: int) -> tuple[str, tuple[str, ...]]:
    """``INSERT INTO events ... SELECT (...) x rows WHERE EXISTS (the event before them)
    RETURNING version, tx_id, id`` for ``dialect``, with parameters named
    ``<column>_<row>`` and ``guard_*``; and their order if the driver takes them by
    position."""
    columns = events_table.c

    # Typed as Any: with cold caches mypy 2.4.1 crashes inferring select(*...) and
    # union_all(*...) on these columns ("Invalid type replacement to expand").
    build: Any = select
    unite: Any = union_all

    def row(i: int) -> Any:
        return build(
            *(bindparam(f"{key}_{i}", type_=columns[key].type).label(key) for key in _EVENT_KEYS)
        )

    source = (row(0) if rows == 1 else unite(*(row(i) for i in range(rows)))).subquery("new")
    before = exists().where(
        and_(
            columns.stream_id == bindparam("guard_stream", type_=columns.stream_id.type),
            columns.version == bindparam("guard_version", type_=columns.version.type),
            columns.hash == bindparam("guard_hash", type_=columns.hash.type),
        )
    )
    statement = insert(events_table).from_select(list(_EVENT_KEYS), select(*source.c).where(before))
    compiled = statement.returning(
        events_table.c.version, events_table.c.tx_id, events_table.c.id
    ).compile(dialect=dialect)
    return str(compiled), tuple(compiled.positiontup or ())
