"""Run the store's Alembic migrations from Python."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from president.store.engine import create_store_engine

if TYPE_CHECKING:
    from alembic.config import Config

# Alembic (with Mako and Pygments) is imported where a migration is run or the newest
# one looked up: a service that never opens an event store starts without it (about
# a tenth of a second less before it serves again after a restart).

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
"""The Alembic environment shipped with the package (``env.py``, ``versions/``)."""

_MIGRATION_LOCK = 0x70726573  # PostgreSQL advisory lock key: one migrator at a time


def alembic_config() -> Config:
    """An Alembic configuration for the shipped migrations, with no database yet."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def head_revision() -> str:
    """The newest migration's revision id."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise RuntimeError(f"no migrations found in {MIGRATIONS_DIR}")
    return head


def migrate(url: str | URL) -> None:
    """Create or upgrade the store's schema in the database at ``url`` (``upgrade head``).

    Safe to call from several processes at once: on PostgreSQL they take turns
    on an advisory lock, on SQLite on the write lock.
    """
    from alembic import command

    engine = create_store_engine(url, poolclass=NullPool)
    try:
        with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK}
                )
            config = alembic_config()
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    finally:
        engine.dispose()
