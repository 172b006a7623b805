"""The table list's read model: one row per table, kept by the table service.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the table list."""
    op.create_table(
        "table_directory",
        sa.Column("table_id", sa.String(200), primary_key=True),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("options", sa.Text, nullable=False),
        sa.Column("seated", sa.Integer, nullable=False),
        sa.Column("seat_count", sa.Integer, nullable=False),
        sa.Column("phase", sa.String(32), nullable=False),
        sa.Column("visibility", sa.String(32), nullable=False),
        sa.Column("open", sa.Boolean, nullable=False),
    )
    op.create_index("ix_table_directory_open", "table_directory", ["open", "table_id"])


def downgrade() -> None:
    """Drop the table list."""
    op.drop_index("ix_table_directory_open", table_name="table_directory")
    op.drop_table("table_directory")
