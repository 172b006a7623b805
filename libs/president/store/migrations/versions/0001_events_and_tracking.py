"""Events with positions, command ids and the hash chain; consumer tracking.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``events`` and ``tracking``."""
    if op.get_bind().dialect.name == "postgresql":
        # The writing transaction's id (PostgreSQL 13+); readers only return rows
        # of transactions older than every transaction still running.
        tx_default = sa.text("(pg_current_xact_id()::text::bigint)")
    else:
        tx_default = sa.text("0")
    op.create_table(
        "events",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("tx_id", sa.BigInteger(), nullable=False, server_default=tx_default),
        sa.Column("stream_id", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(200), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.Column("metadata", sa.Text(), nullable=False),
        sa.Column("command_id", sa.String(200), nullable=False),
        sa.Column("command_seq", sa.Integer(), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("previous_hash", sa.String(64), nullable=False),
        sa.UniqueConstraint("stream_id", "version", name="uq_events_stream_version"),
        sa.UniqueConstraint("command_id", "command_seq", name="uq_events_command"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_events_position", "events", ["tx_id", "id"])
    op.create_table(
        "tracking",
        sa.Column("consumer", sa.String(200), primary_key=True),
        sa.Column("position_tx", sa.BigInteger(), nullable=False),
        sa.Column("position_id", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    """Drop ``tracking`` and ``events``."""
    op.drop_table("tracking")
    op.drop_index("ix_events_position", table_name="events")
    op.drop_table("events")
