"""The Alembic environment shipped in the package, as the command line runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from alembic import command
from sqlalchemy import inspect
from sqlalchemy.pool import NullPool

from president.store import EventStore, create_store_engine, head_revision, migrate
from president.store.migrate import MIGRATIONS_DIR, alembic_config

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer


def _tables(url: str) -> set[str]:
    engine = create_store_engine(url, poolclass=NullPool)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_the_alembic_command_line_creates_the_schema(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    alembic = Path(sys.executable).parent / "alembic"
    ini = MIGRATIONS_DIR / "alembic.ini"

    upgrade = subprocess.run(
        [str(alembic), "-c", str(ini), "-x", f"url={url}", "upgrade", "head"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PRESIDENT_STORE_URL": ""},
    )

    assert upgrade.returncode == 0, upgrade.stderr
    assert {"events", "tracking", "alembic_version"} <= _tables(url)
    with EventStore.from_url(url) as store:
        assert store.current_version("table-1") == 0


def test_the_command_line_says_when_no_database_is_given(tmp_path: Path) -> None:
    alembic = Path(sys.executable).parent / "alembic"
    ini = MIGRATIONS_DIR / "alembic.ini"

    upgrade = subprocess.run(
        [str(alembic), "-c", str(ini), "upgrade", "head"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PRESIDENT_STORE_URL": ""},
        cwd=tmp_path,
    )

    assert upgrade.returncode != 0
    assert "no database given" in upgrade.stderr


def test_migrations_go_down_and_up_again_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    _down_and_up(url)


def test_migrations_go_down_and_up_again_on_postgresql(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database("migrations")
    try:
        _down_and_up(url)
    finally:
        postgres_server.drop_database(url)


def _down_and_up(url: str) -> None:
    migrate(url)
    engine = create_store_engine(url, poolclass=NullPool)
    try:
        with engine.begin() as connection:
            config = alembic_config()
            config.attributes["connection"] = connection
            command.downgrade(config, "base")
        assert _tables(url) == {"alembic_version"}
    finally:
        engine.dispose()
    migrate(url)
    assert {"events", "tracking", "players_accounts", "players_sessions"} <= _tables(url)
    assert head_revision() == "0013_tournament_draw_secrets"
