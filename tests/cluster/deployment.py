"""The recommended deployment (``deploy/``) as processes on the cluster's hosts.

Three NATS servers clustered (JetStream on each; the events stream, its
commitment feed and the lease bucket kept three times), PostgreSQL as a
primary and a streaming standby, two table replicas with leases, two
gateways, and dealer, timer, scoring and players on a host of their own.
Every service is started as production starts it, ``python -m
president.services.<name>.main`` with its settings in the environment, on
the host's own address; the clients have a host of their own.
"""

from __future__ import annotations

import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from president.servicekit.launcher import nats_server_binary, port_open, wait_healthy
from tests.cluster.network import Network
from tests.cluster.postgres_pair import PostgresPair

NATS_HOSTS = ("nats1", "nats2", "nats3")
TABLE_HOSTS = ("table1", "table2")
GATEWAY_HOSTS = ("gw1", "gw2")
#: dealer, timer, scoring and players.
SERVICES_HOST = "svc"
CLIENT_HOST = "client"
HOSTS = (*NATS_HOSTS, "pg1", "pg2", *TABLE_HOSTS, *GATEWAY_HOSTS, SERVICES_HOST, CLIENT_HOST)

PORTS = {"gateway": 50051, "table": 50052, "dealer": 50053, "timer": 50054, "scoring": 50055}
PORTS["players"] = 50056
NATS_PORT = 4222
NATS_ROUTE_PORT = 6222
#: A table lease's lifetime (as ``make chaos``'s replicas): a lost holder's tables move
#: after at most this.
LEASE_SECONDS = "3"
STREAM = "PRESIDENT_EVENTS"
#: The services run this checkout's code (not whatever the interpreter has installed).
ROOT = Path(__file__).resolve().parents[2]
CODE = f"{ROOT / 'libs'}:{ROOT / 'gen' / 'python'}"
SUBJECT_PREFIX = "events.table"


@dataclass
class Process:
    """One service (or NATS server) on one host."""

    name: str
    host: str
    service: str
    process: subprocess.Popen[bytes] | None = None


@dataclass
class Deployment:
    network: Network
    workdir: Path
    synchronous_postgres: bool = False
    #: Processes whose wall clock runs this many seconds off (libfaketime), by name.
    skews: dict[str, int] = field(default_factory=dict)
    processes: dict[str, Process] = field(default_factory=dict)
    postgres: PostgresPair | None = None
    secret: str = field(default_factory=lambda: secrets.token_hex(16))

    # -- where things are -------------------------------------------------------------
    def address(self, host: str, service: str) -> str:
        return f"{self.network.hosts[host]}:{PORTS[service]}"

    @property
    def nats_url(self) -> str:
        return ",".join(f"nats://{self.network.hosts[h]}:{NATS_PORT}" for h in NATS_HOSTS)

    @property
    def gateways(self) -> list[str]:
        return [self.address(h, "gateway") for h in GATEWAY_HOSTS]

    @property
    def client_targets(self) -> list[str]:
        """The gateways as the clients reach them: one gRPC target per gateway, naming it
        first and the other after it (a client moves there when its own is unreachable)."""
        gateways = self.gateways
        return [f"ipv4:{','.join(gateways[n:] + gateways[:n])}" for n in range(len(gateways))]

    @property
    def scoring(self) -> str:
        return self.address(SERVICES_HOST, "scoring")

    def database_url(self, name: str = "store") -> str:
        assert self.postgres is not None
        return self.postgres.url(name)

    # -- start and stop ---------------------------------------------------------------
    def start(self) -> Deployment:
        self.workdir.mkdir(parents=True, exist_ok=True)
        for host in NATS_HOSTS:
            self._start_nats(host)
        self.postgres = PostgresPair(self.network, self.workdir / "pg", self.synchronous_postgres)
        self.postgres.start()
        for host in NATS_HOSTS:
            self._wait_port(host, NATS_PORT)
        # The back end together, then the gateways (as make chaos's stack: a gateway that
        # starts first waits out its channels' reconnect backoff, not the services).
        back = [("dealer", SERVICES_HOST), ("players", SERVICES_HOST)]
        back += [("table", h) for h in TABLE_HOSTS]
        back += [("scoring", SERVICES_HOST), ("timer", SERVICES_HOST)]
        for phase in (back, [("gateway", h) for h in GATEWAY_HOSTS]):
            for service, host in phase:
                self._start_service(service, host)
            for service, host in phase:
                self.wait_up(f"{service}-{host}")
        return self

    def stop(self) -> None:
        """SIGTERM to every process at once (each drains in its own grace time), then wait."""
        for name in self.processes:
            self.signal(name, signal.SIGCONT)
            self.signal(name, signal.SIGTERM)
        for name in self.processes:
            self.stop_one(name)
        if self.postgres is not None:
            self.postgres.stop()

    def stop_one(self, name: str, kill: bool = False) -> None:
        running = self.processes[name].process
        if running is None or running.poll() is not None:
            return
        running.kill() if kill else running.terminate()
        try:
            running.wait(20)
        except subprocess.TimeoutExpired:
            running.kill()
            running.wait()

    def signal(self, name: str, number: int) -> None:
        running = self.processes[name].process
        if running is not None and running.poll() is None:
            running.send_signal(number)

    def restart(self, name: str) -> None:
        entry = self.processes[name]
        if entry.service == "nats":
            self._start_nats(entry.host)
        else:
            self._start_service(entry.service, entry.host)
        self.wait_up(name)

    def wait_up(self, name: str, timeout: float = 90.0) -> None:
        entry = self.processes[name]
        if entry.service == "nats":
            self._wait_port(entry.host, NATS_PORT, timeout)
            return
        try:
            wait_healthy(self.address(entry.host, entry.service), timeout, entry.process)
        except (RuntimeError, TimeoutError) as error:
            raise RuntimeError(f"{error}; see {self.workdir / (name + '.log')}") from None

    def names(self, service: str) -> list[str]:
        return [name for name, entry in self.processes.items() if entry.service == service]

    def host_of(self, name: str) -> str:
        return self.processes[name].host

    # -- the processes ------------------------------------------------------------------
    def _start_nats(self, host: str) -> None:
        me = self.network.hosts[host]
        routes = ",".join(
            f"nats://{self.network.hosts[h]}:{NATS_ROUTE_PORT}" for h in NATS_HOSTS if h != host
        )
        data = self.workdir / host
        data.mkdir(parents=True, exist_ok=True)
        command = [
            str(nats_server_binary()),
            *("-a", me, "-p", str(NATS_PORT), "-js", "-sd", str(data), "-n", host),
            *("--cluster_name", "president", "--cluster", f"nats://{me}:{NATS_ROUTE_PORT}"),
            *("--routes", routes),
        ]
        self._spawn(host, host, "nats", command)

    def _env(self, service: str, host: str) -> dict[str, str]:
        assert self.postgres is not None
        me = self.network.hosts[host]
        tables = ",".join(self.address(h, "table") for h in TABLE_HOSTS)
        return {
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": CODE,
            "PRESIDENT_HOST": me,
            "PRESIDENT_DATABASE_URL": self.postgres.url("store"),
            "PRESIDENT_DEALER_DATABASE_URL": self.postgres.url("dealer"),
            "PRESIDENT_SCORING_DATABASE_URL": self.postgres.url("scoring"),
            "PRESIDENT_PLAYERS_DATABASE_URL": self.postgres.url("players"),
            "PRESIDENT_NATS_URL": self.nats_url,
            "PRESIDENT_STREAM": STREAM,
            "PRESIDENT_SUBJECT_PREFIX": SUBJECT_PREFIX,
            "PRESIDENT_STREAM_REPLICAS": "3",
            "PRESIDENT_TABLE_ADDRESS": tables,
            "PRESIDENT_TABLE_ADVERTISE": f"{me}:{PORTS['table']}",
            "PRESIDENT_TABLE_LEASE_SECONDS": LEASE_SECONDS,
            "PRESIDENT_DEALER_ADDRESS": self.address(SERVICES_HOST, "dealer"),
            "PRESIDENT_SCORING_ADDRESS": self.address(SERVICES_HOST, "scoring"),
            "PRESIDENT_PLAYERS_ADDRESS": self.address(SERVICES_HOST, "players"),
            "PRESIDENT_TOKEN_SECRET": self.secret,
            "PRESIDENT_EDGE_SECRET": self.secret,
            "PRESIDENT_METRICS_PORT": "-1",
            "PRESIDENT_GRACE_SECONDS": "2",
            # Every bot is on the one client host: the limits per address are raised.
            "PRESIDENT_LIMITS_SCALE": "100",
        }

    def _start_service(self, service: str, host: str) -> None:
        command = [sys.executable, "-m", f"president.services.{service}.main"]
        name = f"{service}-{host}"
        env = self._env(service, host)
        if name in self.skews:
            # Its wall clock (and, by the same constant, its monotonic clock) runs off by
            # the skew from its start: libfaketime's change at run time breaks sleeps.
            env.update(LD_PRELOAD=str(libfaketime()), FAKETIME=f"{self.skews[name]:+d}")
        self._spawn(name, host, service, command, env)

    def _spawn(
        self,
        name: str,
        host: str,
        service: str,
        command: list[str],
        env: dict[str, str] | None = None,
    ) -> None:
        log = (self.workdir / f"{name}.log").open("ab")
        process = subprocess.Popen(
            [*self.network.run_in(host), *command], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        self.processes[name] = Process(name, host, service, process)

    def _wait_port(self, host: str, port: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not port_open(self.network.hosts[host], port):
            if time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on {host}:{port}; see {self.workdir}")
            time.sleep(0.1)


def libfaketime() -> Path:
    """Debian's libfaketime (threads' build), or a RuntimeError saying how to get it."""
    found = sorted(Path("/usr/lib").glob("*/faketime/libfaketimeMT.so.1"))
    if not found:
        raise RuntimeError(
            "the clock skew faults need Debian's faketime package: make faketime "
            "(apt-get install faketime)"
        )
    return found[0]


def all_hosts() -> Iterable[str]:
    return HOSTS
