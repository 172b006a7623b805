"""The web edge's settings from environment variables (the README's "Configuration").

The shared ones (host, log level, grace period, metrics port, the gateway's
port) come from :class:`president.servicekit.config.Settings`; these are the
edge's own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from president.servicekit.config import Settings, env_origins
from president.servicekit.server import MAX_MESSAGE_BYTES

DEFAULT_PORT = 8080
#: A request message larger than this is refused RESOURCE_EXHAUSTED before it is decoded:
#: by default the gateway's own limit, so a browser is refused where a native client is.
DEFAULT_MAX_BODY_BYTES = MAX_MESSAGE_BYTES


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        raise SystemExit(f"{name} must be a whole number, not {raw!r}") from None


@dataclass(frozen=True)
class WebSettings:
    """Where the edge listens, what it serves, whom it lets in and where the gateway is."""

    shared: Settings = field(default_factory=Settings)
    port: int = field(default_factory=lambda: _int("PRESIDENT_WEB_PORT", DEFAULT_PORT))
    static_dir: Path = field(
        default_factory=lambda: Path(os.environ.get("PRESIDENT_WEB_STATIC_DIR", "web/public"))
    )
    #: Other origins whose pages may call the API (CORS); the edge's own origin always may.
    allowed_origins: tuple[str, ...] = field(
        default_factory=lambda: env_origins("PRESIDENT_WEB_ALLOWED_ORIGINS")
    )
    #: The spectators' HTTP door the page watches at when it holds no seat ("": none).
    audience_url: str = field(
        default_factory=lambda: os.environ.get("PRESIDENT_WEB_AUDIENCE_URL", "").rstrip("/")
    )
    tls_cert: str = field(default_factory=lambda: os.environ.get("PRESIDENT_WEB_TLS_CERT", ""))
    tls_key: str = field(default_factory=lambda: os.environ.get("PRESIDENT_WEB_TLS_KEY", ""))
    max_body_bytes: int = field(
        default_factory=lambda: _int("PRESIDENT_WEB_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES)
    )
    gateway_address: str = field(
        default_factory=lambda: os.environ.get("PRESIDENT_GATEWAY_ADDRESS", "")
    )

    def __post_init__(self) -> None:
        if bool(self.tls_cert) != bool(self.tls_key):
            raise SystemExit(
                "set both PRESIDENT_WEB_TLS_CERT and PRESIDENT_WEB_TLS_KEY for TLS, or neither"
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
