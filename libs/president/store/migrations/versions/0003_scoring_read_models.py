"""Scoring's read models and its exactly-once progress per table stream.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the scoring tables."""
    op.create_table(
        "scoring_progress",
        sa.Column("stream_id", sa.String(200), primary_key=True),
        sa.Column("version", sa.Integer, nullable=False),
    )
    op.create_table(
        "scoring_tables",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("game_no", sa.Integer, nullable=False),
        sa.Column("rounds_played", sa.Integer, nullable=False),
        sa.Column("totals", sa.Text, nullable=False),
        sa.Column("last_standings", sa.Text, nullable=False),
        sa.Column("players", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
    )
    op.create_table(
        "scoring_games",
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("game_no", sa.Integer, nullable=False),
        sa.Column("winners", sa.Text, nullable=False),
        sa.Column("winner_player_ids", sa.Text, nullable=False),
        sa.Column("stopped", sa.Boolean, nullable=False),
        sa.Column("totals", sa.Text, nullable=False),
        sa.Column("rounds", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("table_id", "game_no", name="pk_scoring_games"),
    )
    op.create_table(
        "scoring_players",
        sa.Column("player_id", sa.String(200), primary_key=True),
        sa.Column("rounds_played", sa.Integer, nullable=False),
        sa.Column("rounds_won", sa.Integer, nullable=False),
        sa.Column("games_played", sa.Integer, nullable=False),
        sa.Column("games_won", sa.Integer, nullable=False),
        sa.Column("points", sa.BigInteger, nullable=False),
        sa.Column("places", sa.Text, nullable=False),
    )


def downgrade() -> None:
    """Drop the scoring tables."""
    for name in ("scoring_players", "scoring_games", "scoring_tables", "scoring_progress"):
        op.drop_table(name)
