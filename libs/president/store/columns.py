"""A stream read for its audit: its events and the command columns the hash chain does not cover.

``command_id`` and ``command_seq`` are columns of their own (the unique pair
that makes an append idempotent); the chain hashes the metadata's command id
instead. :func:`read_audited_stream` reads both in one query, so an auditor
can check that they agree (:mod:`president.audit.integrity`).
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import NamedTuple

from sqlalchemy import Engine

from president.store.fast_read import stream_rows
from president.store.records import Position, StoredEvent, json_object


class CommandColumns(NamedTuple):
    """One row's unhashed command columns."""

    version: int
    command_id: str
    command_seq: int


def read_audited_stream(
    engine: Engine, stream_id: str
) -> tuple[list[StoredEvent], list[CommandColumns]]:
    """The stream's events in version order, and each row's command columns.

    The events are those :meth:`president.store.EventStore.read_stream` gives.
    """
    rows = stream_rows(engine, stream_id)
    loads = json.loads
    metadata = [loads(row[4]) for row in rows]
    if not all(type(value) is dict for value in metadata):
        for row in rows:
            json_object(row[4])  # raises, naming the row's metadata
    # The driver gives the integer columns as int and the payload as bytes (or a buffer).
    stored = [
        StoredEvent(
            row[0],
            row[1],
            row[2],
            row[3] if type(row[3]) is bytes else bytes(row[3]),
            MappingProxyType(values),
            Position(row[5], row[6]),
            row[7],
            row[8],
        )
        for row, values in zip(rows, metadata, strict=True)
    ]
    columns = [CommandColumns(row[1], row[9], row[10]) for row in rows]
    return stored, columns
