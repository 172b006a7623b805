"""Settings from environment variables, one place for every service.

Every variable is documented in the README ("Configuration").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from president.servicekit.nats import DEFAULT_MAX_AGE_SECONDS, Subjects


@dataclass(frozen=True)
class Keepalive:
    """How the services' channels keep a quiet connection alive, and what their servers
    allow: one object for both ends, so a server never takes its clients' pings for abuse.

    A client pings a connection that carried nothing for :attr:`ping_ms`, with calls open
    or not, for as long as it is quiet; a server accepts pings that far apart (half, for
    timers' jitter) without data and without calls. gRPC's server defaults allow one ping
    in five minutes and answer more with GOAWAY ENHANCE_YOUR_CALM ``too_many_pings``, which
    fails every call open on the connection UNAVAILABLE.
    """

    ping_ms: int = 30_000

    def client_options(self) -> list[tuple[str, int]]:
        return [
            ("grpc.keepalive_time_ms", self.ping_ms),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0),
        ]

    def server_options(self) -> list[tuple[str, int]]:
        return [
            ("grpc.http2.min_ping_interval_without_data_ms", self.ping_ms // 2),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0),
        ]


#: The keepalive of every internal channel and every service's server.
KEEPALIVE = Keepalive()


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_origins(name: str) -> tuple[str, ...]:
    """Web origins from the environment variable ``name``: full origins
    (``https://club.example``) separated by commas, never ``*``."""
    raw = os.environ.get(name, "")
    origins = tuple(part.strip().rstrip("/") for part in raw.split(",") if part.strip())
    for origin in origins:
        if origin == "*" or "://" not in origin:
            raise SystemExit(
                f"{name} lists {origin!r}: name each origin in full (https://club.example), "
                "never '*'"
            )
    return origins


def env_seconds(name: str, default: float) -> float:
    """A duration in seconds from the environment variable ``name`` (``default`` if unset)."""
    raw = os.environ.get(name, "")
    try:
        return float(raw) if raw else default
    except ValueError:
        raise SystemExit(f"{name} must be a number of seconds, not {raw!r}") from None


def _env_int(name: str, default: int) -> int:
    return env_int(name, default)


def env_int(name: str, default: int, environ: Mapping[str, str] | None = None) -> int:
    """A whole number from the environment variable ``name`` (``default`` if unset)."""
    raw = (os.environ if environ is None else environ).get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a whole number, not {raw!r}") from None


@dataclass(frozen=True)
class Settings:
    """Where things are. Defaults suit one machine; production sets the URLs."""

    database_url: str = field(
        default_factory=lambda: _env("PRESIDENT_DATABASE_URL", "sqlite:///var/president.db")
    )
    dealer_database_url: str = field(
        default_factory=lambda: _env(
            "PRESIDENT_DEALER_DATABASE_URL", "sqlite:///var/president-dealer.db"
        )
    )
    scoring_database_url: str = field(
        default_factory=lambda: _env(
            "PRESIDENT_SCORING_DATABASE_URL", "sqlite:///var/president-scoring.db"
        )
    )
    players_database_url: str = field(
        default_factory=lambda: _env(
            "PRESIDENT_PLAYERS_DATABASE_URL", "sqlite:///var/president-players.db"
        )
    )
    nats_url: str = field(
        default_factory=lambda: _env("PRESIDENT_NATS_URL", "nats://127.0.0.1:4222")
    )
    host: str = field(default_factory=lambda: _env("PRESIDENT_HOST", "127.0.0.1"))
    gateway_port: int = field(default_factory=lambda: _env_int("PRESIDENT_GATEWAY_PORT", 50051))
    table_port: int = field(default_factory=lambda: _env_int("PRESIDENT_TABLE_PORT", 50052))
    dealer_port: int = field(default_factory=lambda: _env_int("PRESIDENT_DEALER_PORT", 50053))
    timer_port: int = field(default_factory=lambda: _env_int("PRESIDENT_TIMER_PORT", 50054))
    scoring_port: int = field(default_factory=lambda: _env_int("PRESIDENT_SCORING_PORT", 50055))
    players_port: int = field(default_factory=lambda: _env_int("PRESIDENT_PLAYERS_PORT", 50056))
    metrics_port: int = field(default_factory=lambda: _env_int("PRESIDENT_METRICS_PORT", 0))
    #: Where /metrics listens: loopback unless a deployment opens it (0.0.0.0 in a container).
    metrics_host: str = field(default_factory=lambda: _env("PRESIDENT_METRICS_HOST", "127.0.0.1"))
    table_address: str = field(default_factory=lambda: _env("PRESIDENT_TABLE_ADDRESS", ""))
    dealer_address: str = field(default_factory=lambda: _env("PRESIDENT_DEALER_ADDRESS", ""))
    scoring_address: str = field(default_factory=lambda: _env("PRESIDENT_SCORING_ADDRESS", ""))
    players_address: str = field(default_factory=lambda: _env("PRESIDENT_PLAYERS_ADDRESS", ""))
    token_secret: str = field(default_factory=lambda: _env("PRESIDENT_TOKEN_SECRET", ""))
    #: How long an access token lives (minutes, so a revoked or expired identity ends soon).
    access_ttl_seconds: int = field(
        default_factory=lambda: _env_int("PRESIDENT_ACCESS_TTL_SECONDS", 15 * 60)
    )
    #: How long a session (its refresh tokens) lives unused.
    refresh_ttl_seconds: int = field(
        default_factory=lambda: _env_int("PRESIDENT_REFRESH_TTL_SECONDS", 30 * 24 * 3600)
    )
    #: A JSON file of the identity providers whose JWTs the gateway accepts (empty: none).
    trusted_issuers_file: str = field(default_factory=lambda: _env("PRESIDENT_TRUSTED_ISSUERS", ""))
    #: The NATS subject revoked sessions are published on.
    revocations_subject: str = field(
        default_factory=lambda: _env("PRESIDENT_REVOCATIONS_SUBJECT", "president.players.revoked")
    )
    #: Shared by the web edge and the gateway: the edge's proof that it names the browser's
    #: address (:mod:`president.servicekit.peers`); empty: no address named is believed.
    edge_secret: str = field(default_factory=lambda: _env("PRESIDENT_EDGE_SECRET", ""))
    grace_seconds: int = field(default_factory=lambda: _env_int("PRESIDENT_GRACE_SECONDS", 10))
    log_level: str = field(default_factory=lambda: _env("PRESIDENT_LOG_LEVEL", "info"))
    #: How much lower than its starter's the process's CPU priority is (``os.nice``; 0: the
    #: same). On a machine shared with the players' path, an audience replica's 10 lets the
    #: seats' processes go first when the CPU is short.
    nice: int = field(default_factory=lambda: _env_int("PRESIDENT_NICE", 0))
    scoring_durable: str = field(
        default_factory=lambda: _env("PRESIDENT_SCORING_DURABLE", "scoring")
    )
    scoring_partition: str = field(default_factory=lambda: _env("PRESIDENT_SCORING_PARTITION", ""))
    timer_partition: str = field(default_factory=lambda: _env("PRESIDENT_TIMER_PARTITION", ""))
    stream_name: str = field(default_factory=lambda: _env("PRESIDENT_STREAM", "PRESIDENT_EVENTS"))
    subject_prefix: str = field(
        default_factory=lambda: _env("PRESIDENT_SUBJECT_PREFIX", "events.table")
    )
    stream_replicas: int = field(default_factory=lambda: _env_int("PRESIDENT_STREAM_REPLICAS", 1))
    stream_max_age: float = field(
        default_factory=lambda: env_seconds(
            "PRESIDENT_STREAM_MAX_AGE_SECONDS", DEFAULT_MAX_AGE_SECONDS
        )
    )

    def __post_init__(self) -> None:
        try:
            self.subjects  # noqa: B018  # its checks, at start rather than at first use
        except ValueError as error:
            raise SystemExit(f"PRESIDENT_STREAM_MAX_AGE_SECONDS: {error}") from None

    @property
    def subjects(self) -> Subjects:
        """The JetStream stream and subjects of table events."""
        return Subjects(
            prefix=self.subject_prefix,
            stream=self.stream_name,
            replicas=self.stream_replicas,
            max_age_seconds=self.stream_max_age,
        )

    @property
    def lease_bucket(self) -> str:
        """The JetStream key-value bucket of table leases (``PRESIDENT_TABLE_LEASE_SECONDS``)."""
        return f"{self.stream_name}_TABLE_LEASES"

    def address(self, service: str) -> str:
        """Where a client reaches ``service`` (the *_ADDRESS variable, else host:port)."""
        explicit = {
            "table": self.table_address,
            "dealer": self.dealer_address,
            "scoring": self.scoring_address,
            "players": self.players_address,
        }.get(service, "")
        if explicit:
            return explicit
        port = getattr(self, f"{service}_port")
        return f"{self.host}:{port}"
