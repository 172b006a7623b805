"""The lobby's columns of the table list: a table's name, its host's name, and whether it is listed.

Revision ID: 0005_lobby
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_lobby"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the lobby's columns; public tables are listed."""
    with op.batch_alter_table("table_directory") as table:
        table.add_column(sa.Column("name", sa.String(200), nullable=False, server_default=""))
        table.add_column(sa.Column("host_name", sa.String(200), nullable=False, server_default=""))
        table.add_column(sa.Column("listed", sa.Boolean, nullable=False, server_default=sa.false()))
    op.execute("UPDATE table_directory SET listed = (visibility = 'public')")
    op.create_index("ix_table_directory_listed", "table_directory", ["listed", "table_id"])


def downgrade() -> None:
    """Drop the lobby's columns."""
    op.drop_index("ix_table_directory_listed", table_name="table_directory")
    with op.batch_alter_table("table_directory") as table:
        table.drop_column("listed")
        table.drop_column("host_name")
        table.drop_column("name")
