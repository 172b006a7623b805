"""Database URLs and engines for the two backends: SQLite files and PostgreSQL."""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import ConnectionPoolEntry

SQLITE_BUSY_TIMEOUT_S = 30.0
"""How long a SQLite writer waits for another one to finish before giving up."""

_POSTGRES_NAMES = {"postgres", "postgresql", "postgresql+psycopg"}
_SQLITE_NAMES = {"sqlite", "sqlite+pysqlite"}
#: ``pool_pre_ping``: a pooled connection is checked before it is handed out, so after a
#: PostgreSQL restart no call gets a connection the server already closed.
_POSTGRES_POOL = {"pool_size": 5, "max_overflow": 10, "pool_pre_ping": True}


def normalise_url(url: str | URL) -> URL:
    """The SQLAlchemy URL the store uses for ``url``.

    ``postgres://`` and ``postgresql://`` become ``postgresql+psycopg://``
    (psycopg 3). SQLite needs a file: ``sqlite:///relative.db`` or
    ``sqlite:////absolute/path.db``.
    """
    parsed = make_url(url) if isinstance(url, str) else url
    name = parsed.drivername
    if name in _POSTGRES_NAMES:
        return parsed.set(drivername="postgresql+psycopg")
    if name in _SQLITE_NAMES:
        if parsed.database in (None, "", ":memory:") or parsed.database.startswith("file::memory:"):
            raise ValueError(
                "the event store keeps SQLite in a file, not in memory: "
                "use sqlite:///path/to/store.db"
            )
        return parsed.set(drivername="sqlite+pysqlite")
    raise ValueError(
        f"unsupported database URL scheme {name!r}: use sqlite:///path/to/store.db "
        "or postgresql://user@host/dbname"
    )


def create_store_engine(url: str | URL, **engine_options: Any) -> Engine:
    """An engine set up for the store.

    SQLite: WAL journal, a busy timeout, full sync, and write transactions
    that take the write lock at ``BEGIN IMMEDIATE``, so concurrent writers
    queue instead of failing to upgrade a read lock. Reads begin a deferred
    transaction when run with the execution option ``sqlite_begin="DEFERRED"``.
    """
    parsed = normalise_url(url)
    if parsed.drivername.startswith("sqlite"):
        engine = create_engine(
            parsed,
            connect_args={
                "timeout": SQLITE_BUSY_TIMEOUT_S,
                "isolation_level": None,
                "check_same_thread": False,
            },
            **engine_options,
        )
        _set_up_sqlite(engine)
        return engine
    options: dict[str, Any] = {} if "poolclass" in engine_options else _POSTGRES_POOL
    options = {**options, **engine_options}
    return create_engine(parsed, **options)


def _set_up_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _: ConnectionPoolEntry) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = FULL")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        mode = connection.get_execution_options().get("sqlite_begin", "IMMEDIATE")
        if mode not in ("DEFERRED", "IMMEDIATE", "EXCLUSIVE"):
            raise ValueError(f"sqlite_begin must be DEFERRED, IMMEDIATE or EXCLUSIVE, not {mode!r}")
        connection.exec_driver_sql(f"BEGIN {mode}")
