"""Settings from environment variables: one typed object per service, read once at start.

:class:`Settings` holds what every service reads (where things are, the
database URLs, NATS, TLS, logs); each service's own are a class of their own
in this package (:mod:`.gateway`, :mod:`.table`, :mod:`.timer`, :mod:`.web`)
holding these as ``common``. Every field names its variable, default and
meaning (:func:`~president.servicekit.config.fields.setting`); ``docs/settings.md``
is generated from them (``president settings``).
"""

from __future__ import annotations

from dataclasses import dataclass

from president.servicekit.config.fields import FromEnv, group, seconds, setting, whole
from president.servicekit.nats import DEFAULT_MAX_AGE_SECONDS, Subjects
from president.servicekit.tls import TlsSettings


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
    #: How often the players' client pings a gateway (``president.client.gateway.PING_MS``:
    #: it finds a connection cut without a word in seconds, and moves to another gateway).
    public_ping_ms: int = 5_000

    def client_options(self) -> list[tuple[str, int]]:
        return [
            ("grpc.keepalive_time_ms", self.ping_ms),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0),
        ]

    def server_options(self) -> list[tuple[str, int]]:
        allowed = min(self.ping_ms, self.public_ping_ms) // 2
        return [
            ("grpc.http2.min_ping_interval_without_data_ms", allowed),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0),
        ]


#: The keepalive of every internal channel and every service's server.
KEEPALIVE = Keepalive()


@dataclass(frozen=True)
class LeaseSettings(FromEnv):
    """Table leases, read alike by the table service and the gateway."""

    seconds: float = setting(
        "PRESIDENT_TABLE_LEASE_SECONDS",
        0.0,
        "table: how long a replica's lease on a table lasts (0: no leases, one replica); "
        "gateway: above 0 it reads the leases and sends a table's commands to its holder "
        "(set it alike on both)",
        seconds,
    )


@dataclass(frozen=True)
class Settings(FromEnv):
    """Where things are. Defaults suit one machine; production sets the URLs."""

    database_url: str = setting(
        "PRESIDENT_DATABASE_URL",
        "sqlite:///var/president.db",
        "the event store (postgresql+psycopg://user@host/db in production)",
    )
    dealer_database_url: str = setting(
        "PRESIDENT_DEALER_DATABASE_URL",
        "sqlite:///var/president-dealer.db",
        "the dealer's secrets (only the dealer reads it)",
    )
    scoring_database_url: str = setting(
        "PRESIDENT_SCORING_DATABASE_URL",
        "sqlite:///var/president-scoring.db",
        "scoring's read models (results, ratings)",
    )
    players_database_url: str = setting(
        "PRESIDENT_PLAYERS_DATABASE_URL",
        "sqlite:///var/president-players.db",
        "the players service's accounts and sessions (hashes only)",
    )
    nats_url: str = setting(
        "PRESIDENT_NATS_URL",
        "nats://127.0.0.1:4222",
        "NATS with JetStream (a cluster's servers comma-separated: nats://a:4222,nats://b:4222)",
    )
    host: str = setting("PRESIDENT_HOST", "127.0.0.1", "the address every service listens on")
    gateway_port: int = setting("PRESIDENT_GATEWAY_PORT", 50051, "the gateway's gRPC port", whole)
    table_port: int = setting("PRESIDENT_TABLE_PORT", 50052, "the table service's port", whole)
    dealer_port: int = setting("PRESIDENT_DEALER_PORT", 50053, "the dealer's port", whole)
    timer_port: int = setting("PRESIDENT_TIMER_PORT", 50054, "the timer's port", whole)
    scoring_port: int = setting("PRESIDENT_SCORING_PORT", 50055, "scoring's port", whole)
    players_port: int = setting(
        "PRESIDENT_PLAYERS_PORT", 50056, "the players service's port", whole
    )
    tournament_port: int = setting(
        "PRESIDENT_TOURNAMENT_PORT", 50057, "the tournament service's port", whole
    )
    metrics_port: int = setting(
        "PRESIDENT_METRICS_PORT", 0, "where /metrics listens (0: a free port; -1: none)", whole
    )
    #: Where /metrics listens: loopback unless a deployment opens it (0.0.0.0 in a container).
    metrics_host: str = setting(
        "PRESIDENT_METRICS_HOST",
        "127.0.0.1",
        "the address /metrics listens on (0.0.0.0 in a container)",
    )
    table_address: str = setting(
        "PRESIDENT_TABLE_ADDRESS",
        "",
        "where the others reach the table service (host:port; a list of replicas, "
        "ip:port,ip:port, is called round robin); not set: PRESIDENT_HOST and its port",
    )
    dealer_address: str = setting(
        "PRESIDENT_DEALER_ADDRESS", "", "where the table service reaches the dealer (host:port)"
    )
    scoring_address: str = setting(
        "PRESIDENT_SCORING_ADDRESS", "", "where the gateway reaches scoring (host:port)"
    )
    players_address: str = setting(
        "PRESIDENT_PLAYERS_ADDRESS", "", "where the gateway reaches the players service (host:port)"
    )
    tournament_address: str = setting(
        "PRESIDENT_TOURNAMENT_ADDRESS",
        "",
        "where the gateway reaches the tournament service (host:port)",
    )
    token_secret: str = setting(
        "PRESIDENT_TOKEN_SECRET",
        "",
        "the key the players service signs access tokens with and every gateway verifies "
        "them with (required by both; president run makes one)",
    )
    #: How long an access token lives (minutes, so a revoked or expired identity ends soon).
    access_ttl_seconds: int = setting(
        "PRESIDENT_ACCESS_TTL_SECONDS",
        15 * 60,
        "players: an access token's lifetime (gateway: how long it keeps a revocation)",
        whole,
    )
    #: How long a session (its refresh tokens) lives unused.
    refresh_ttl_seconds: int = setting(
        "PRESIDENT_REFRESH_TTL_SECONDS",
        30 * 24 * 3600,
        "players: a session's lifetime (its refresh tokens)",
        whole,
    )
    #: A JSON file of the identity providers whose JWTs the gateway accepts (empty: none).
    trusted_issuers_file: str = setting(
        "PRESIDENT_TRUSTED_ISSUERS",
        "",
        "gateway: a JSON file of the identity providers whose RS256/ES256 JWTs it accepts",
    )
    #: The NATS subject revoked sessions are published on.
    revocations_subject: str = setting(
        "PRESIDENT_REVOCATIONS_SUBJECT",
        "president.players.revoked",
        "the NATS subject revoked sessions are published on",
    )
    #: Shared by the web edge and the gateway: the edge's proof that it names the browser's
    #: address (:mod:`president.servicekit.peers`); empty: no address named is believed.
    edge_secret: str = setting(
        "PRESIDENT_EDGE_SECRET",
        "",
        "web edge and gateway: the edge's proof that it names the browser's address (rate "
        "limits count that address); not set: no named address is believed",
    )
    grace_seconds: int = setting(
        "PRESIDENT_GRACE_SECONDS",
        10,
        "drain time on SIGTERM: how long calls under way may take to finish",
        whole,
    )
    log_level: str = setting(
        "PRESIDENT_LOG_LEVEL", "info", "JSON logs on stderr: debug, info, warning or error"
    )
    #: How much lower than its starter's the process's CPU priority is (``os.nice``; 0: the
    #: same). On a machine shared with the players' path, an audience replica's 10 lets the
    #: seats' processes go first when the CPU is short.
    nice: int = setting(
        "PRESIDENT_NICE",
        0,
        "how much lower the process's CPU priority is (os.nice): an audience replica's 10 "
        "lets the seats go first on a shared machine",
        whole,
    )
    scoring_durable: str = setting(
        "PRESIDENT_SCORING_DURABLE",
        "scoring",
        "scoring's durable consumer (a partition adds -i-of-n)",
    )
    scoring_partition: str = setting(
        "PRESIDENT_SCORING_PARTITION",
        "",
        "scoring: i/n, this replica handles the tables whose CRC-32 id mod n is i; not set: all",
    )
    timer_partition: str = setting(
        "PRESIDENT_TIMER_PARTITION",
        "",
        "timer: i/n, as PRESIDENT_SCORING_PARTITION; not set: all",
    )
    stream_name: str = setting(
        "PRESIDENT_STREAM", "PRESIDENT_EVENTS", "the JetStream stream of table events"
    )
    subject_prefix: str = setting(
        "PRESIDENT_SUBJECT_PREFIX",
        "events.table",
        "the subjects of table events: <prefix>.<table id>",
    )
    stream_replicas: int = setting(
        "PRESIDENT_STREAM_REPLICAS",
        1,
        "copies of the JetStream stream, its commitment feed and the table lease bucket "
        "(at most the NATS servers)",
        whole,
    )
    stream_max_age: float = setting(
        "PRESIDENT_STREAM_MAX_AGE_SECONDS",
        DEFAULT_MAX_AGE_SECONDS,
        "how long the events stream keeps an event (at least 600; 0: for ever); the store "
        "keeps every event regardless",
        seconds,
    )
    grpc_ping_ms: int = setting(
        "PRESIDENT_GRPC_PING_MS",
        Keepalive.ping_ms,
        "how long a quiet connection between the services (the web edge's to the gateway "
        "too) waits before its client pings it; every server permits pings half that far "
        "apart (and the players' client's, every 5 s); set it alike on every service",
        whole,
    )
    tls: TlsSettings = group(TlsSettings)

    def __post_init__(self) -> None:
        if self.grpc_ping_ms < 1000:
            raise SystemExit(
                f"PRESIDENT_GRPC_PING_MS must be 1000 or more (gRPC pings at most once a "
                f"second), not {self.grpc_ping_ms}"
            )
        try:
            self.subjects  # noqa: B018  # its checks, at start rather than at first use
        except ValueError as error:
            raise SystemExit(f"PRESIDENT_STREAM_MAX_AGE_SECONDS: {error}") from None

    @property
    def common(self) -> Settings:
        """What every service reads: these (a service that reads nothing of its own)."""
        return self

    @property
    def keepalive(self) -> Keepalive:
        """The pings of every channel this service opens to another, and what its server
        permits (:class:`Keepalive`)."""
        return Keepalive(ping_ms=self.grpc_ping_ms)

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
        """The JetStream key-value bucket of table leases (:class:`LeaseSettings`)."""
        return f"{self.stream_name}_TABLE_LEASES"

    def address(self, service: str) -> str:
        """Where a client reaches ``service`` (the *_ADDRESS variable, else host:port)."""
        explicit = {
            "table": self.table_address,
            "dealer": self.dealer_address,
            "scoring": self.scoring_address,
            "players": self.players_address,
            "tournament": self.tournament_address,
        }.get(service, "")
        if explicit:
            return explicit
        port = getattr(self, f"{service}_port")
        return f"{self.host}:{port}"
