"""The players service's accounts, sessions and refresh tokens.

Revision ID: 0007_players
Revises: 0006_commitments
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_players"
down_revision = "0006_commitments"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the accounts, their sessions and the sessions' refresh tokens."""
    op.create_table(
        "players_accounts",
        sa.Column("account_id", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("name", sa.String(64), nullable=True),
        sa.Column("name_key", sa.String(64), nullable=True, unique=True),
        sa.Column("display_name", sa.String(64), nullable=False),
        sa.Column("password_hash", sa.String(256), nullable=True),
        sa.Column("device_secret_hash", sa.String(128), nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "players_sessions",
        sa.Column("session_id", sa.String(64), primary_key=True),
        sa.Column("account_id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("revoked_at", sa.BigInteger, nullable=True),
    )
    op.create_index("ix_players_sessions_account", "players_sessions", ["account_id"])
    op.create_index("ix_players_sessions_revoked", "players_sessions", ["revoked_at"])
    op.create_table(
        "players_refresh_tokens",
        sa.Column("token_hash", sa.String(128), primary_key=True),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("used", sa.Boolean, nullable=False),
    )
    op.create_index("ix_players_refresh_session", "players_refresh_tokens", ["session_id"])


def downgrade() -> None:
    """Drop them."""
    op.drop_index("ix_players_refresh_session", table_name="players_refresh_tokens")
    op.drop_table("players_refresh_tokens")
    op.drop_index("ix_players_sessions_revoked", table_name="players_sessions")
    op.drop_index("ix_players_sessions_account", table_name="players_sessions")
    op.drop_table("players_sessions")
    op.drop_table("players_accounts")
