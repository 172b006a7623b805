"""The reconnect backoff of clients and of the channels between services: a restarted
gateway (or peer) is tried again soon, never in a hot loop (gRPC's rule: each wait 1.6
times the last, up to the cap, spread by ±20 %)."""

from __future__ import annotations

from president.client.gateway import RECONNECT_MS
from president.servicekit.channels import MAX_RECONNECT_MS
from president.servicekit.channels import RECONNECT_MS as INTERNAL_FIRST_MS

MULTIPLIER = 1.6  # gRPC's connection backoff (doc/connection-backoff.md)
JITTER = 0.2


def tries(first_ms: int, most_ms: int, until_s: float, spread: float) -> list[float]:
    """When a channel tries to connect while its server is down (each wait stretched by
    ``spread``, -JITTER to +JITTER)."""
    at, wait, times = 0.0, first_ms / 1000, []
    while at < until_s:
        at += wait * (1 + spread)
        times.append(at)
        wait = min(wait * MULTIPLIER, most_ms / 1000)
    return times


def test_a_client_tries_a_restarted_gateway_again_within_about_a_second() -> None:
    first, most = RECONNECT_MS
    for spread in (-JITTER, 0.0, JITTER):
        for back_at in (3.0, 3.5, 4.0, 10.0):  # down 3 s, then its start-up
            times = tries(first, most, back_at + 5, spread)
            wait = min(t for t in times if t >= back_at) - back_at
            assert wait <= 1.0 * (1 + JITTER) + 1e-9


def test_a_gateway_down_for_long_is_tried_about_once_a_second_not_in_a_hot_loop() -> None:
    first, most = RECONNECT_MS
    assert first <= 100  # the first try comes at once: a gateway often is back in a moment
    times = tries(first, most, 60.0, -JITTER)
    assert len(times) <= 60 / (most / 1000 * (1 - JITTER)) + 10
    # Many clients of one gateway come back no faster than an internal service does.
    assert most >= MAX_RECONNECT_MS


def test_a_service_reaches_a_restarted_peer_within_about_half_a_second() -> None:
    for spread in (-JITTER, 0.0, JITTER):
        for back_at in (3.0, 3.7, 4.2, 10.0):  # the dealer or a table, down 3 s then starting
            times = tries(INTERNAL_FIRST_MS, MAX_RECONNECT_MS, back_at + 5, spread)
            wait = min(t for t in times if t >= back_at) - back_at
            assert wait <= 0.5 * (1 + JITTER) + 1e-9
