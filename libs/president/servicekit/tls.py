"""TLS for the public door and mutual TLS between the services, from configured files.

Two independent settings (docs/operations.md, "Limits, TLS and mutual TLS"):

- **Public TLS**: the gateway serves TLS with ``PRESIDENT_TLS_CERT`` and
  ``PRESIDENT_TLS_KEY`` (PEM files; no client certificate asked for: players
  prove who they are with their token). Its clients (the web edge, probes)
  trust ``PRESIDENT_GATEWAY_TLS_CA`` (default: the system's roots).
- **Mutual TLS inside**: with ``PRESIDENT_INTERNAL_TLS_CA`` set, every
  internal service (dealer, table, timer, scoring, players) serves only TLS
  with ``PRESIDENT_INTERNAL_TLS_CERT``/``_KEY`` and requires a client
  certificate signed by that CA; every internal client (the gateway, the
  table calling the dealer and its peers, the timer, probes) presents
  ``PRESIDENT_INTERNAL_TLS_CLIENT_CERT``/``_KEY`` (default: the service's own
  pair) and checks the server's against the same CA.
  ``PRESIDENT_INTERNAL_TLS_SERVER_NAME`` names the host the servers'
  certificates are checked for when it is not the address dialled.

Unset, everything is plaintext, as on one machine's loopback.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

import grpc

from president.servicekit.config.fields import FromEnv, setting


def _read(variable: str, path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise SystemExit(f"{variable}: cannot read {path!r}: {error.strerror}") from None


@dataclass(frozen=True)
class TlsSettings(FromEnv):
    """The certificate files of both settings ("" where not configured)."""

    public_cert: str = setting(
        "PRESIDENT_TLS_CERT", "", "gateway: its TLS certificate (PEM); not set: plaintext"
    )
    public_key: str = setting("PRESIDENT_TLS_KEY", "", "gateway: its TLS key (PEM)")
    gateway_ca: str = setting(
        "PRESIDENT_GATEWAY_TLS_CA",
        "",
        "the gateway's clients (web edge, probes): the CA they trust for it; not set: the "
        "system's roots",
    )
    internal_ca: str = setting(
        "PRESIDENT_INTERNAL_TLS_CA",
        "",
        "mutual TLS between the services: the CA (PEM); not set: plaintext inside",
    )
    internal_cert: str = setting(
        "PRESIDENT_INTERNAL_TLS_CERT", "", "mutual TLS: this service's certificate"
    )
    internal_key: str = setting("PRESIDENT_INTERNAL_TLS_KEY", "", "mutual TLS: this service's key")
    client_cert: str = setting(
        "PRESIDENT_INTERNAL_TLS_CLIENT_CERT",
        "",
        "mutual TLS: the certificate it presents as a client",
        shown="its own",
    )
    client_key: str = setting(
        "PRESIDENT_INTERNAL_TLS_CLIENT_KEY",
        "",
        "mutual TLS: the key it presents as a client",
        shown="its own",
    )
    server_name: str = setting(
        "PRESIDENT_INTERNAL_TLS_SERVER_NAME",
        "",
        "mutual TLS: the host name the servers' certificates are checked for; not set: the "
        "host dialled",
    )

    def __post_init__(self) -> None:
        # A client presents the service's own pair unless told otherwise.
        object.__setattr__(self, "client_cert", self.client_cert or self.internal_cert)
        object.__setattr__(self, "client_key", self.client_key or self.internal_key)
        self.check()

    def check(self) -> None:
        """A clear exit for a half-configured setting."""
        if bool(self.public_cert) != bool(self.public_key):
            raise SystemExit("set both PRESIDENT_TLS_CERT and PRESIDENT_TLS_KEY, or neither")
        if self.internal_ca and not (self.internal_cert and self.internal_key):
            raise SystemExit(
                "PRESIDENT_INTERNAL_TLS_CA is set: set PRESIDENT_INTERNAL_TLS_CERT and "
                "PRESIDENT_INTERNAL_TLS_KEY too (this service's certificate and key)"
            )

    @property
    def public(self) -> bool:
        return bool(self.public_cert)

    @property
    def internal(self) -> bool:
        return bool(self.internal_ca)

    def public_ssl_context(self) -> ssl.SSLContext | None:
        """The public door's TLS for a plain socket server (the spectators' HTTP door), the
        gateway's certificate; None for plaintext."""
        if not self.public:
            return None
        _read("PRESIDENT_TLS_CERT", self.public_cert)  # a clear error if either is unreadable
        _read("PRESIDENT_TLS_KEY", self.public_key)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.public_cert, self.public_key)
        return context

    def server_credentials(self, public: bool) -> grpc.ServerCredentials | None:
        """What a server listens with: the public door's TLS (``public``), else mutual TLS
        inside when configured; None for plaintext."""
        if public and self.public:
            pair = (
                _read("PRESIDENT_TLS_KEY", self.public_key),
                _read("PRESIDENT_TLS_CERT", self.public_cert),
            )
            return grpc.ssl_server_credentials([pair])
        if not public and self.internal:
            pair = (
                _read("PRESIDENT_INTERNAL_TLS_KEY", self.internal_key),
                _read("PRESIDENT_INTERNAL_TLS_CERT", self.internal_cert),
            )
            return grpc.ssl_server_credentials(
                [pair],
                root_certificates=_read("PRESIDENT_INTERNAL_TLS_CA", self.internal_ca),
                require_client_auth=True,
            )
        return None

    def internal_credentials(self) -> grpc.ChannelCredentials | None:
        """What a client of an internal service presents and trusts (None: plaintext)."""
        if not self.internal:
            return None
        return grpc.ssl_channel_credentials(
            root_certificates=_read("PRESIDENT_INTERNAL_TLS_CA", self.internal_ca),
            private_key=_read("PRESIDENT_INTERNAL_TLS_CLIENT_KEY", self.client_key),
            certificate_chain=_read("PRESIDENT_INTERNAL_TLS_CLIENT_CERT", self.client_cert),
        )

    def gateway_credentials(self) -> grpc.ChannelCredentials | None:
        """What a client of the gateway trusts, when the gateway serves TLS (None: plaintext)."""
        if not self.public:
            return None
        roots = _read("PRESIDENT_GATEWAY_TLS_CA", self.gateway_ca) if self.gateway_ca else None
        return grpc.ssl_channel_credentials(root_certificates=roots)

    def internal_options(self, target: str) -> list[tuple[str, str]]:
        """Channel options naming the host certificates are checked for: the configured
        name, or the first address's host when a channel dials a list of replicas."""
        if not self.internal:
            return []
        name = self.server_name
        if not name and target.startswith("ipv4:"):
            name = target.removeprefix("ipv4:").split(",")[0].rpartition(":")[0]
        return [("grpc.ssl_target_name_override", name)] if name else []


#: No TLS anywhere: one machine's loopback, and the tests'.
PLAINTEXT = TlsSettings()
