"""What scoring's read models share in SQL: reading without a write lock, inserting once."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Table
from sqlalchemy.dialects import postgresql, sqlite

#: Execution options of a read: on SQLite a DEFERRED transaction takes no write lock.
READ = {"sqlite_begin": "DEFERRED"}


def insert_ignore(
    connection: Connection, table: Table, rows: dict[str, Any] | list[dict[str, Any]]
) -> None:
    """Insert rows unless their key exists (waits for a concurrent insert of it)."""
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    connection.execute(dialect.insert(table).on_conflict_do_nothing(), rows)
