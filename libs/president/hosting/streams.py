"""Stream naming: which event stream holds a table, and which table a stream holds."""

from __future__ import annotations

#: Every table's stream is named this prefix and the table id.
STREAM_PREFIX = "table-"


def stream_id(table_id: str) -> str:
    """The event stream of a table."""
    return f"{STREAM_PREFIX}{table_id}"


def table_id_of(stream: str) -> str:
    """The table id of a table's event stream: the inverse of :func:`stream_id`.

    A stream name without the table prefix is returned as it is.
    """
    return stream.removeprefix(STREAM_PREFIX)
