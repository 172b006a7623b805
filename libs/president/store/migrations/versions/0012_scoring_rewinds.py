"""Scoring notices a rewound table history: the hash it applied last, each table's share.

``scoring_progress.hash`` keeps the hash of the last event applied of each
stream, so an event of another history at that version (a database that
failed over to a standby without its last commits) is noticed.
``scoring_table_players`` keeps what each table added to each player's
statistics, so a rewound table's share can be taken back out before its
events are applied again from the store. Tables scored before this revision
have no share recorded: a rewind of one re-applies its events without taking
the old share out (as before).

Revision ID: 0012_scoring_rewinds
Revises: 0011_account_skeletons
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_scoring_rewinds"
down_revision = "0011_account_skeletons"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """The progress's hash column and the table shares' table."""
    op.add_column("scoring_progress", sa.Column("hash", sa.String(64), nullable=True))
    op.create_table(
        "scoring_table_players",
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("player_id", sa.String(200), nullable=False),
        sa.Column("rounds_played", sa.Integer, nullable=False),
        sa.Column("rounds_won", sa.Integer, nullable=False),
        sa.Column("games_played", sa.Integer, nullable=False),
        sa.Column("games_won", sa.Integer, nullable=False),
        sa.Column("points", sa.BigInteger, nullable=False),
        sa.Column("places", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("table_id", "player_id", name="pk_scoring_table_players"),
    )


def downgrade() -> None:
    """Drop them."""
    op.drop_table("scoring_table_players")
    with op.batch_alter_table("scoring_progress") as batch:
        batch.drop_column("hash")
