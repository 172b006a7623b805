"""Tables that leave the lobby: when a table last changed, and whether it was evicted.

A finished (closed) or abandoned table is evicted after a configurable time
(the table service's sweep, :mod:`president.services.table.eviction`): the
list no longer shows it and the table service no longer loads it. Its log
stays in the store for the audit. Rows written before this revision have no
change time and are not evicted until they change again.

Revision ID: 0009_eviction
Revises: 0007_players
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_eviction"
down_revision = "0008_ratings"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the change time and the eviction mark (indexed for the sweep)."""
    with op.batch_alter_table("table_directory") as table:
        table.add_column(sa.Column("changed_at", sa.DateTime(timezone=True), nullable=True))
        table.add_column(
            sa.Column("evicted", sa.Boolean, nullable=False, server_default=sa.false())
        )
    op.create_index("ix_table_directory_eviction", "table_directory", ["evicted", "changed_at"])


def downgrade() -> None:
    """Drop the eviction columns."""
    op.drop_index("ix_table_directory_eviction", table_name="table_directory")
    with op.batch_alter_table("table_directory") as table:
        table.drop_column("evicted")
        table.drop_column("changed_at")
