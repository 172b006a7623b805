"""The channels between services: one set of options for every internal client, mutual TLS
when configured."""

from __future__ import annotations

from typing import Any

import grpc

from president.servicekit.config import KEEPALIVE, Keepalive
from president.servicekit.tls import TlsSettings

#: Reconnect quickly after a peer restarts: gRPC's default backoff grows to
#: two minutes, longer than any call here waits for a channel to be ready. Capped at
#: half a second, a call waiting for a restarted peer (the table's for the dealer, the
#: gateway's for a table) goes on at most that long after the peer listens again; a
#: few tries a second at a dead peer inside the deployment cost nothing.
RECONNECT_MS = 100
MAX_RECONNECT_MS = 500
#: How long one connection attempt may take. gRPC reads ``grpc.min_reconnect_backoff_ms`` as
#: this (not as a backoff): at 100 ms a peer slow to answer on a loaded machine left the
#: channel failing, and a call failed UNAVAILABLE at once instead of waiting for it.
CONNECT_TIMEOUT_MS = 5_000
#: A channel option: the channel's connections are its own, not shared with other channels.
OWN_CONNECTIONS = "grpc.use_local_subchannel_pool"


def channel_target(address: str) -> str:
    """The gRPC target of an address, or of a list of them (``host:port,host:port``, IP
    addresses: the replicas of one service), which a channel spreads its calls over."""
    return f"ipv4:{address}" if "," in address else address


def internal_channel_options(keepalive: Keepalive = KEEPALIVE) -> list[tuple[str, Any]]:
    """Options for a channel from one service to another: calls go round the addresses of
    its target (a dead replica is skipped until it answers again); a quiet connection is
    pinged as the servers allow (:class:`~president.servicekit.config.Keepalive`)."""
    return [
        ("grpc.lb_policy_name", "round_robin"),
        ("grpc.max_receive_message_length", 64 * 1024 * 1024),
        *keepalive.client_options(),
        ("grpc.enable_retries", 1),
        ("grpc.initial_reconnect_backoff_ms", RECONNECT_MS),
        ("grpc.min_reconnect_backoff_ms", CONNECT_TIMEOUT_MS),
        ("grpc.max_reconnect_backoff_ms", MAX_RECONNECT_MS),
    ]


def _internal(
    address: str, tls: TlsSettings, keepalive: Keepalive
) -> tuple[str, list[tuple[str, Any]], grpc.ChannelCredentials | None]:
    target = channel_target(address)
    options = internal_channel_options(keepalive) + tls.internal_options(target)
    return target, options, tls.internal_credentials()


def internal_channel(
    address: str, tls: TlsSettings, keepalive: Keepalive = KEEPALIVE
) -> grpc.aio.Channel:
    """A grpc.aio channel from one service to another at ``address`` (one or a list):
    mutual TLS when configured (:mod:`president.servicekit.tls`), else plaintext."""
    target, options, credentials = _internal(address, tls, keepalive)
    if credentials is None:
        return grpc.aio.insecure_channel(target, options=options)
    return grpc.aio.secure_channel(target, credentials, options=options)


def internal_sync_channel(
    address: str, tls: TlsSettings, keepalive: Keepalive = KEEPALIVE
) -> grpc.Channel:
    """:func:`internal_channel` for blocking callers (worker threads, probes)."""
    target, options, credentials = _internal(address, tls, keepalive)
    if credentials is None:
        return grpc.insecure_channel(target, options=options)
    return grpc.secure_channel(target, credentials, options=options)


def gateway_channel(
    address: str, tls: TlsSettings, keepalive: Keepalive = KEEPALIVE
) -> grpc.aio.Channel:
    """A grpc.aio channel of a client inside the deployment (the web edge) to the gateway:
    TLS when the gateway serves it (trusting ``PRESIDENT_GATEWAY_TLS_CA``), else plaintext.

    Each such channel has connections of its own (gRPC otherwise shares one between
    channels of the same target and options), so the edge's channels are that many HTTP/2
    connections, each with its own cap of open streams."""
    credentials = tls.gateway_credentials()
    options = [*internal_channel_options(keepalive), (OWN_CONNECTIONS, 1)]
    if credentials is None:
        return grpc.aio.insecure_channel(address, options=options)
    return grpc.aio.secure_channel(address, credentials, options=options)


def probe_channel(
    address: str, tls: TlsSettings, public: bool, options: list[tuple[str, Any]]
) -> grpc.Channel:
    """A blocking channel to a service's health check: the gateway's (``public``) door over
    its TLS when it serves TLS, an internal service's over mutual TLS when configured."""
    credentials = tls.gateway_credentials() if public else tls.internal_credentials()
    if credentials is None:
        return grpc.insecure_channel(address, options=options)
    return grpc.secure_channel(address, credentials, options=options + tls.internal_options(""))
