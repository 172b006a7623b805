"""A stream read for its audit: its events and the command columns the hash chain does not cover.

``command_id`` and ``command_seq`` are columns of their own (the unique pair
that makes an append idempotent); the chain hashes the metadata's command id
instead. :func:`read_audited_stream` reads both in one query, so an auditor
can check that they agree (:mod:`president.audit.integrity`).
"""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import Engine, select

from president.store.recorder import EVENT_COLUMNS, stored_event
from president.store.records import StoredEvent
from president.store.schema import events as events_table


class CommandColumns(NamedTuple):
    """One row's unhashed command columns."""

    version: int
    command_id: str
    command_seq: int


def read_audited_stream(
    engine: Engine, stream_id: str
) -> tuple[list[StoredEvent], list[CommandColumns]]:
    """The stream's events in version order, and each row's command columns."""
    query = (
        select(*EVENT_COLUMNS, events_table.c.command_id, events_table.c.command_seq)
        .where(events_table.c.stream_id == stream_id)
        .order_by(events_table.c.version)
    )
    connection = engine.connect().execution_options(sqlite_begin="DEFERRED")
    with connection, connection.begin():
        found = connection.execute(query).all()
    stored = [stored_event(row) for row in found]
    columns = [
        CommandColumns(int(row.version), row.command_id, int(row.command_seq)) for row in found
    ]
    return stored, columns
