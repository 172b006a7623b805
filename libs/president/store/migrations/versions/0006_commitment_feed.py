"""The public commitment feed: every round's deal fingerprint, chained, outside any table's log.

Revision ID: 0006_commitments
Revises: 0005_lobby
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_commitments"
down_revision = "0005_lobby"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``commitment_feed``."""
    op.create_table(
        "commitment_feed",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("stream_id", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("game_no", sa.Integer, nullable=False),
        sa.Column("round_no", sa.Integer, nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("committed_at", sa.String(40), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("previous_hash", sa.String(64), nullable=False),
        sa.UniqueConstraint("stream_id", "version", name="uq_commitment_feed_event"),
    )
    op.create_index("ix_commitment_feed_day", "commitment_feed", ["day", "seq"])


def downgrade() -> None:
    """Drop ``commitment_feed``."""
    op.drop_index("ix_commitment_feed_day", table_name="commitment_feed")
    op.drop_table("commitment_feed")
