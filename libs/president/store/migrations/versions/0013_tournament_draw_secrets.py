"""The tournament service's seat-draw secrets: one per tournament round, never in its stream.

Revision ID: 0013_tournament_draw_secrets
Revises: 0012_scoring_rewinds
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_tournament_draw_secrets"
down_revision = "0012_scoring_rewinds"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``tournament_draw_secrets``."""
    op.create_table(
        "tournament_draw_secrets",
        sa.Column("tournament_id", sa.String(64), nullable=False),
        sa.Column("round_no", sa.Integer, nullable=False),
        sa.Column("secret", sa.LargeBinary(32), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("tournament_id", "round_no", name="pk_tournament_draw_secrets"),
    )


def downgrade() -> None:
    """Drop ``tournament_draw_secrets``."""
    op.drop_table("tournament_draw_secrets")
