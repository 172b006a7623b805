"""PostgreSQL as the deployment runs it: a primary and a streaming standby on two hosts.

Debian's server binaries (``/usr/lib/postgresql/<version>/bin``), run as the
``postgres`` user (the server refuses root). The standby is a
``pg_basebackup -R`` of the primary; with ``synchronous`` the primary waits
for it (``synchronous_standby_names`` and ``synchronous_commit = on``), else
replication is asynchronous, PostgreSQL's default. The services reach
whichever is the primary by one multi-host URL with
``target_session_attrs=read-write`` (:meth:`PostgresPair.url`).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from tests.cluster.network import Network

PORT = 5432
DATABASES = ("store", "dealer", "scoring", "players")
#: The standby's name in the primary's ``synchronous_standby_names``.
STANDBY_NAME = "standby"


def server_bin() -> Path:
    """The newest Debian PostgreSQL server's binaries, or a sentence saying what is missing."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if not found:
        raise RuntimeError(
            "make cluster-chaos needs PostgreSQL's server binaries (Debian's postgresql "
            "package: /usr/lib/postgresql/<version>/bin)"
        )
    return found[-1].parent


@dataclass
class PgHost:
    host: str
    data: Path
    process: subprocess.Popen[bytes] | None = None


@dataclass
class PostgresPair:
    network: Network
    workdir: Path
    synchronous: bool
    hosts: tuple[str, str] = ("pg1", "pg2")
    servers: dict[str, PgHost] = field(default_factory=dict)
    #: Which host is the primary now.
    primary: str = "pg1"

    def _as_postgres(self, host: str, *command: str) -> list[str]:
        entry = pwd.getpwnam("postgres")
        return [
            *self.network.run_in(host),
            "setpriv",
            f"--reuid={entry.pw_uid}",
            f"--regid={entry.pw_gid}",
            "--init-groups",
            *command,
        ]

    def _chown(self, path: Path) -> None:
        entry = pwd.getpwnam("postgres")
        path.mkdir(parents=True, exist_ok=True)
        os.chown(path, entry.pw_uid, entry.pw_gid)

    def start(self) -> PostgresPair:
        bin_dir = server_bin()
        self._chown(self.workdir)
        self.workdir.chmod(0o755)
        first, second = self.hosts
        data = self.workdir / first
        subprocess.run(
            self._as_postgres(
                first, str(bin_dir / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres"
            ),
            check=True,
            capture_output=True,
        )
        net = f"{self.network.hosts[first].rsplit('.', 1)[0]}.0/24"
        with (data / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {net} trust\nhost replication all {net} trust\n")
        settings = [
            "wal_level = replica",
            "max_wal_senders = 5",
            "hot_standby = on",
            "fsync = off",  # a killed server's writes stay in the page cache; lighter here
            "max_connections = 200",
        ]
        if self.synchronous:
            settings += [f"synchronous_standby_names = '{STANDBY_NAME}'", "synchronous_commit = on"]
        with (data / "postgresql.conf").open("a") as conf:
            conf.write("\n".join(settings) + "\n")
        self.servers[first] = PgHost(first, data)
        self._run(first)
        standby = self.workdir / second
        subprocess.run(
            self._as_postgres(
                second,
                str(bin_dir / "pg_basebackup"),
                "-h",
                self.network.hosts[first],
                "-p",
                str(PORT),
                "-U",
                "postgres",
                "-D",
                str(standby),
                "-R",
                "-X",
                "stream",
            ),
            check=True,
            capture_output=True,
        )
        with (standby / "postgresql.auto.conf").open("a") as conf:
            conf.write(
                f"primary_conninfo = 'host={self.network.hosts[first]} port={PORT} "
                f"user=postgres application_name={STANDBY_NAME}'\n"
                # promoted, the standby must not wait for a standby of its own
                "synchronous_standby_names = ''\n"
            )
        self.servers[second] = PgHost(second, standby)
        self._run(second)
        self._wait_streaming()
        with self._connect(first) as connection:
            for name in DATABASES:
                connection.execute(f'CREATE DATABASE "{name}"')
        return self

    def _run(self, host: str) -> None:
        server = self.servers[host]
        log = (self.workdir / f"{host}.log").open("ab")
        sockets = self.workdir / f"{host}-socket"  # not in the data: a base backup copies it
        self._chown(sockets)
        options = [
            "-c",
            f"listen_addresses={self.network.hosts[host]}",
            "-c",
            f"unix_socket_directories={sockets}",
            "-p",
            str(PORT),
        ]
        server.process = subprocess.Popen(
            self._as_postgres(
                host, str(server_bin() / "postgres"), "-D", str(server.data), *options
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                with self._connect(host):
                    return
            except psycopg.OperationalError:
                if server.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"PostgreSQL on {host} did not start: see {log.name}"
                    ) from None
                time.sleep(0.2)

    def _connect(self, host: str) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(
            host=self.network.hosts[host],
            port=PORT,
            user="postgres",
            dbname="postgres",
            autocommit=True,
            connect_timeout=3,
        )

    def _wait_streaming(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with self._connect(self.primary) as connection:
                row = connection.execute(
                    "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
                ).fetchone()
            if row and row[0]:
                return
            time.sleep(0.2)
        raise RuntimeError("the standby never streamed from the primary")

    def url(self, database: str) -> str:
        """The services' URL: both hosts, the one that takes writes chosen at connect."""
        hosts = "&".join(f"host={self.network.hosts[h]}:{PORT}" for h in self.hosts)
        return (
            f"postgresql+psycopg://postgres@/{database}?{hosts}"
            "&target_session_attrs=read-write&connect_timeout=3"
        )

    def lag_bytes(self) -> int:
        """How far the standby's replay is behind the primary's WAL (bytes)."""
        with self._connect(self.primary) as connection:
            row = connection.execute(
                "SELECT COALESCE(max(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)), 0)"
                " FROM pg_stat_replication"
            ).fetchone()
        return int(row[0]) if row else 0

    def fail_over(self, standby_behind: float = 0.0) -> None:
        """kill -9 of the primary (and its backends), then the standby promoted.

        With ``standby_behind``, the primary is first cut from the standby that many
        seconds under load, so the standby is behind when the primary dies: the window an
        asynchronous standby loses, made certain (a synchronous primary answers no commit
        meanwhile). A paused standby would not do: its kernel still takes the WAL in.
        """
        old = self.primary
        new = next(h for h in self.hosts if h != old)
        if standby_behind:
            self.network.partition([old], [new])
            time.sleep(standby_behind)
        for pid in self.network.pids(old):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        server = self.servers[old]
        if server.process is not None:
            server.process.wait()
        self.network.heal()
        subprocess.run(
            self._as_postgres(
                new,
                str(server_bin() / "pg_ctl"),
                "promote",
                "-w",
                "-D",
                str(self.servers[new].data),
            ),
            check=True,
            capture_output=True,
        )
        self.primary = new

    def stop(self) -> None:
        for server in self.servers.values():
            if server.process is not None and server.process.poll() is None:
                server.process.send_signal(signal.SIGINT)  # fast shutdown
                try:
                    server.process.wait(20)
                except subprocess.TimeoutExpired:
                    server.process.kill()
                    server.process.wait()
