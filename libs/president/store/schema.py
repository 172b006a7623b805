"""The store's tables, as the queries see them. Alembic migrations own the schema.

``tests/integration/store/test_migrations.py`` checks that these definitions and the
migrated database agree.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    FetchedValue,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

RowId = BigInteger().with_variant(Integer(), "sqlite")
"""A 64-bit row id; on SQLite the ``INTEGER PRIMARY KEY`` that aliases the rowid."""

events = Table(
    "events",
    metadata,
    Column("id", RowId, primary_key=True, autoincrement=True),
    # PostgreSQL: the writing transaction's id (pg_current_xact_id), set by the
    # database; SQLite: 0. With ``id`` it makes the global position.
    Column("tx_id", BigInteger, nullable=False, server_default=FetchedValue()),
    Column("stream_id", String(200), nullable=False),
    Column("version", Integer, nullable=False),
    Column("type", String(200), nullable=False),
    Column("payload", LargeBinary, nullable=False),
    # Canonical JSON, kept as text so the hash chain checks byte for byte.
    Column("metadata", Text, nullable=False),
    Column("command_id", String(200), nullable=False),
    # The event's index within its append; (command_id, command_seq) is unique,
    # so a command can be appended only once.
    Column("command_seq", Integer, nullable=False),
    Column("hash", String(64), nullable=False),
    Column("previous_hash", String(64), nullable=False),
    UniqueConstraint("stream_id", "version", name="uq_events_stream_version"),
    Index("ix_events_position", "tx_id", "id"),
    UniqueConstraint("command_id", "command_seq", name="uq_events_command"),
    sqlite_autoincrement=True,
)

tracking = Table(
    "tracking",
    metadata,
    Column("consumer", String(200), primary_key=True),
    Column("position_tx", BigInteger, nullable=False),
    Column("position_id", BigInteger, nullable=False),
)
