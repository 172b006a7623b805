"""The dealer's secrets: one per round, kept apart from the event store's tables.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``dealer_secrets``."""
    op.create_table(
        "dealer_secrets",
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("game_no", sa.Integer, nullable=False),
        sa.Column("round_no", sa.Integer, nullable=False),
        sa.Column("secret", sa.LargeBinary(32), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("players", sa.Integer, nullable=False),
        sa.Column("jokers", sa.Boolean, nullable=False),
        sa.Column("hand_size", sa.Integer, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("revealed_at", sa.String(40), nullable=True),
        sa.PrimaryKeyConstraint("table_id", "game_no", "round_no", name="pk_dealer_secrets"),
    )


def downgrade() -> None:
    """Drop ``dealer_secrets``."""
    op.drop_table("dealer_secrets")
