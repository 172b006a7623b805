"""The lobby's pages read only the rows they list: indexes that lead with every filter.

A lobby page asks for the tables not evicted that are open (joinable), or
listed (public, to spectate too), in table id order after the last one of
the previous page. The indexes of 0004 and 0005 held ``open`` or ``listed``
and the id, so the page also walked every evicted table that once was
open or listed (their rows stay for good) and, for the joinable lobby,
every public table under way or finished: a page cost what the lobby no
longer lists. These hold ``evicted`` too, so a page walks its rows alone.

Revision ID: 0010_lobby_pages
Revises: 0009_eviction
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0010_lobby_pages"
down_revision = "0009_eviction"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """The lobby's indexes with ``evicted`` between the filter and the id."""
    op.drop_index("ix_table_directory_open", table_name="table_directory")
    op.drop_index("ix_table_directory_listed", table_name="table_directory")
    op.create_index(
        "ix_table_directory_open_page", "table_directory", ["open", "evicted", "table_id"]
    )
    op.create_index(
        "ix_table_directory_listed_page", "table_directory", ["listed", "evicted", "table_id"]
    )


def downgrade() -> None:
    """The indexes of 0004 and 0005 again."""
    op.drop_index("ix_table_directory_listed_page", table_name="table_directory")
    op.drop_index("ix_table_directory_open_page", table_name="table_directory")
    op.create_index("ix_table_directory_listed", "table_directory", ["listed", "table_id"])
    op.create_index("ix_table_directory_open", "table_directory", ["open", "table_id"])
