"""Scoring's ratings, leaderboards and players' history (issue 12).

Revision ID: 0008_ratings
Revises: 0007_players
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_ratings"
down_revision = "0007_players"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the ratings tables."""
    op.create_table(
        "ratings_tables",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("ranked", sa.Boolean, nullable=False),
    )
    op.create_table(
        "ratings_games",
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("game_no", sa.Integer, nullable=False),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("ranked", sa.Boolean, nullable=False),
        sa.Column("started_at", sa.String(40), nullable=False),
        sa.Column("ended_at", sa.String(40), nullable=True),
        sa.Column("stopped", sa.Boolean, nullable=True),
        sa.Column("winners", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("table_id", "game_no", name="pk_ratings_games"),
    )
    op.create_table(
        "ratings_places",
        sa.Column("table_id", sa.String(64), nullable=False),
        sa.Column("game_no", sa.Integer, nullable=False),
        sa.Column("round_no", sa.Integer, nullable=False),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("account", sa.String(200), nullable=False),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("ranked", sa.Boolean, nullable=False),
        sa.Column("ended_key", sa.String(300), nullable=False),
        sa.Column("ended_at", sa.String(40), nullable=False),
        sa.Column("place", sa.Integer, nullable=False),
        sa.Column("points", sa.Integer, nullable=False),
        sa.Column("mu_before", sa.Float, nullable=True),
        sa.Column("sigma_before", sa.Float, nullable=True),
        sa.Column("mu_after", sa.Float, nullable=True),
        sa.Column("sigma_after", sa.Float, nullable=True),
        sa.PrimaryKeyConstraint(
            "table_id", "game_no", "round_no", "seat", name="pk_ratings_places"
        ),
    )
    op.create_index("ix_ratings_places_account", "ratings_places", ["account", "ended_key"])
    op.create_index("ix_ratings_places_fold", "ratings_places", ["preset", "ranked", "ended_key"])
    op.create_table(
        "ratings_skills",
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("account", sa.String(200), nullable=False),
        sa.Column("mu", sa.Float, nullable=False),
        sa.Column("sigma", sa.Float, nullable=False),
        sa.Column("rounds", sa.Integer, nullable=False),
        sa.Column("conservative", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("preset", "account", name="pk_ratings_skills"),
    )
    op.create_index("ix_ratings_skills_board", "ratings_skills", ["preset", "conservative"])
    op.create_table(
        "ratings_points",
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("period", sa.String(32), nullable=False),
        sa.Column("account", sa.String(200), nullable=False),
        sa.Column("points", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("preset", "period", "account", name="pk_ratings_points"),
    )
    op.create_index("ix_ratings_points_board", "ratings_points", ["preset", "period", "points"])
    op.create_table(
        "ratings_folds",
        sa.Column("preset", sa.String(32), primary_key=True),
        sa.Column("last_key", sa.String(300), nullable=False),
    )


def downgrade() -> None:
    """Drop them."""
    op.drop_table("ratings_folds")
    op.drop_index("ix_ratings_points_board", table_name="ratings_points")
    op.drop_table("ratings_points")
    op.drop_index("ix_ratings_skills_board", table_name="ratings_skills")
    op.drop_table("ratings_skills")
    op.drop_index("ix_ratings_places_fold", table_name="ratings_places")
    op.drop_index("ix_ratings_places_account", table_name="ratings_places")
    op.drop_table("ratings_places")
    op.drop_table("ratings_games")
    op.drop_table("ratings_tables")
