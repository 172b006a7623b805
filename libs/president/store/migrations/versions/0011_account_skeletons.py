"""Accounts' name skeletons: a new name that looks like an existing one is one lookup.

An account name's skeleton (Unicode TR39's, with accents dropped: see
``president.services.players.names.skeleton``) is stored beside its key,
under a unique index, so registering a look-alike of an existing name
(Cyrillic а for Latin a, a dotless ı, an accent) fails on the index. This
adds the column empty: the players service fills existing rows' skeletons
when it starts (the skeleton is its rule, which this room cannot import),
the oldest account first, leaving empty the later look-alikes that were made
before this rule (they still log in).

Revision ID: 0011_account_skeletons
Revises: 0010_lobby_pages
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_account_skeletons"
down_revision = "0010_lobby_pages"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """The skeleton column and its unique index."""
    op.add_column("players_accounts", sa.Column("name_skeleton", sa.String(256), nullable=True))
    op.create_index(
        "ix_players_accounts_skeleton", "players_accounts", ["name_skeleton"], unique=True
    )


def downgrade() -> None:
    """Drop them."""
    op.drop_index("ix_players_accounts_skeleton", table_name="players_accounts")
    with op.batch_alter_table("players_accounts") as batch:
        batch.drop_column("name_skeleton")
