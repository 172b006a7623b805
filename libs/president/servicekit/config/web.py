"""The web edge's settings: where it listens, what it serves, whom it lets in and where the
gateway is. The shared ones (host, log level, grace period, metrics port, the gateway's port,
TLS to the gateway) are its ``shared`` :class:`~president.servicekit.config.Settings`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from president.servicekit.config import Settings
from president.servicekit.config.fields import (
    FromEnv,
    address,
    group,
    networks,
    origins,
    path,
    seconds,
    setting,
    whole,
)
from president.servicekit.config.gateway import LimitSettings
from president.servicekit.server import MAX_MESSAGE_BYTES


@dataclass(frozen=True)
class WebSettings(FromEnv):
    """Where the edge listens, what it serves, whom it lets in and where the gateway is."""

    shared: Settings = group(Settings)
    port: int = setting("PRESIDENT_WEB_PORT", 8080, "web edge: its HTTP port", whole)
    static_dir: Path = setting(
        "PRESIDENT_WEB_STATIC_DIR",
        Path("web/public"),
        "web edge: the folder of static files it serves",
        path,
    )
    #: Other origins whose pages may call the API (CORS); the edge's own origin always may.
    allowed_origins: tuple[str, ...] = setting(
        "PRESIDENT_WEB_ALLOWED_ORIGINS",
        (),
        "web edge: other sites whose pages may call the API (full origins, comma-separated; "
        "never *)",
        origins,
    )
    #: The proxies in front of the edge whose ``X-Forwarded-For`` names the browser (none:
    #: every caller is counted by its own connection's address, loopback too).
    trusted_proxies: tuple[str, ...] = setting(
        "PRESIDENT_WEB_TRUSTED_PROXIES",
        (),
        "web edge: the proxies in front of it whose X-Forwarded-For it believes (addresses "
        "or networks, comma-separated); not set: it believes none and counts each caller "
        "by its connection's address",
        networks,
    )
    #: The spectators' HTTP door the page watches at when it holds no seat ("": none).
    audience_url: str = setting(
        "PRESIDENT_WEB_AUDIENCE_URL",
        "",
        "web edge: where pages that hold no seat watch (an audience replica's door, "
        "https://...), told to the page at /config.json and allowed by its CSP",
        address,
    )
    tls_cert: str = setting(
        "PRESIDENT_WEB_TLS_CERT", "", "web edge: its certificate (PEM): it then speaks https"
    )
    tls_key: str = setting("PRESIDENT_WEB_TLS_KEY", "", "web edge: its key (PEM)")
    #: A request message larger than this is refused RESOURCE_EXHAUSTED before it is decoded:
    #: by default the gateway's own limit, so a browser is refused where a native client is.
    max_body_bytes: int = setting(
        "PRESIDENT_WEB_MAX_BODY_BYTES",
        MAX_MESSAGE_BYTES,
        "web edge: the largest request message (the gateway's own limit)",
        whole,
    )
    #: A request's headers must arrive within this, else 408 and the connection closes.
    header_seconds: float = setting(
        "PRESIDENT_WEB_HEADER_SECONDS",
        10.0,
        "web edge: how long a request's headers may take to arrive (from the connection "
        "or the request's first byte) before it answers 408 and closes the connection",
        seconds,
    )
    #: The connections to the gateway that carry the browsers' streams (unary calls have one
    #: of their own): the edge holds at most this many times the gateway's streams per
    #: connection open at once.
    upstream_connections: int = setting(
        "PRESIDENT_WEB_UPSTREAM_CONNECTIONS",
        4,
        "web edge: its connections to the gateway for streams (each carries up to "
        "PRESIDENT_GATEWAY_MAX_STREAMS_PER_CONNECTION; unary calls have one more of their own)",
        whole,
    )
    #: Open streams per browser address at the edge (scaled by PRESIDENT_LIMITS_SCALE); per
    #: identity it is the gateway's PRESIDENT_STREAMS_PER_IDENTITY, counted per token.
    streams_per_peer: int = setting(
        "PRESIDENT_WEB_STREAMS_PER_PEER",
        64,
        "web edge: open streams per browser address (multiplied by PRESIDENT_LIMITS_SCALE)",
        whole,
    )
    #: The stream limits the edge shares with the gateway (per identity, per connection,
    #: the scale).
    limits: LimitSettings = group(LimitSettings)
    gateway_address: str = setting(
        "PRESIDENT_GATEWAY_ADDRESS",
        "",
        "web edge: where the gateway's gRPC is",
        shown="host:PRESIDENT_GATEWAY_PORT",
    )

    def __post_init__(self) -> None:
        if bool(self.tls_cert) != bool(self.tls_key):
            raise SystemExit(
                "set both PRESIDENT_WEB_TLS_CERT and PRESIDENT_WEB_TLS_KEY for TLS, or neither"
            )
        if not self.header_seconds > 0:
            raise SystemExit("PRESIDENT_WEB_HEADER_SECONDS must be more than 0")
        if self.upstream_connections < 1 or self.streams_per_peer < 1:
            raise SystemExit(
                "PRESIDENT_WEB_UPSTREAM_CONNECTIONS and PRESIDENT_WEB_STREAMS_PER_PEER must be "
                "at least 1"
            )
        if self.max_body_bytes < 1:
            raise SystemExit("PRESIDENT_WEB_MAX_BODY_BYTES must be at least 1")
        if self.audience_url and not self.audience_url.startswith(("http://", "https://")):
            raise SystemExit(
                "PRESIDENT_WEB_AUDIENCE_URL must be a whole address, as "
                f"https://watch.club.example, not {self.audience_url!r}"
            )

    @property
    def tls(self) -> bool:
        """Whether the edge terminates TLS itself."""
        return bool(self.tls_cert)

    @property
    def gateway(self) -> str:
        """Where the gateway's native gRPC listens."""
        return self.gateway_address or self.shared.address("gateway")
