"""Options of the channels between services: one set for every internal client."""

from __future__ import annotations

from typing import Any

#: Reconnect quickly after a peer restarts: gRPC's default backoff grows to
#: two minutes, longer than any call here waits for a channel to be ready.
RECONNECT_MS = 100
MAX_RECONNECT_MS = 1_000
#: How long one connection attempt may take. gRPC reads ``grpc.min_reconnect_backoff_ms`` as
#: this (not as a backoff): at 100 ms a peer slow to answer on a loaded machine left the
#: channel failing, and a call failed UNAVAILABLE at once instead of waiting for it.
CONNECT_TIMEOUT_MS = 5_000


def channel_target(address: str) -> str:
    """The gRPC target of an address, or of a list of them (``host:port,host:port``, IP
    addresses: the replicas of one service), which a channel spreads its calls over."""
    return f"ipv4:{address}" if "," in address else address


def internal_channel_options() -> list[tuple[str, Any]]:
    """Options for a channel from one service to another: calls go round the addresses of
    its target (a dead replica is skipped until it answers again)."""
    return [
        ("grpc.lb_policy_name", "round_robin"),
        ("grpc.max_receive_message_length", 64 * 1024 * 1024),
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.enable_retries", 1),
        ("grpc.initial_reconnect_backoff_ms", RECONNECT_MS),
        ("grpc.min_reconnect_backoff_ms", CONNECT_TIMEOUT_MS),
        ("grpc.max_reconnect_backoff_ms", MAX_RECONNECT_MS),
    ]
