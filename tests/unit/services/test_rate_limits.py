"""The gateway's rate limits, stream limits and peer addresses, on a clock the test moves;
the client waiting out a rate limit's hint; the TLS settings' checks."""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from president.client.errors import GatewayError, honouring_retry_hints
from president.gateway.v1 import gateway_pb2
from president.servicekit.errors import RETRY_AFTER, Code, ServiceError
from president.servicekit.grpc_errors import to_status
from president.servicekit.peers import EDGE_SECRET, FORWARDED_PEER, Peers, address_of
from president.servicekit.stream_limits import (
    STREAMS_FULL,
    TOO_MANY_STREAMS,
    StreamLimits,
)
from president.servicekit.tls import TlsSettings
from president.services.gateway.limits.rate_limits import (
    CLASSES,
    METHOD_CLASS,
    RATE_LIMITED,
    Buckets,
    Limit,
    RateLimits,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def refusal(call: object) -> ServiceError:
    with pytest.raises(ServiceError) as caught:
        call()  # type: ignore[operator]
    return caught.value


def test_every_gateway_method_has_a_call_class() -> None:
    methods = {m.name for m in gateway_pb2.DESCRIPTOR.services_by_name["GatewayService"].methods}
    assert methods == set(METHOD_CLASS)
    assert set(METHOD_CLASS.values()) <= set(CLASSES)


def test_a_bucket_lets_its_burst_through_then_says_how_long_to_wait() -> None:
    clock = Clock()
    buckets = Buckets(Limit(3, 30), clock)  # 3 at once, one more every 10 s
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(10.0)
    assert buckets.take("b") == 0.0  # another key has a bucket of its own
    clock.now += 4
    assert buckets.take("a") == pytest.approx(6.0)
    clock.now += 6
    assert buckets.take("a") == 0.0
    assert buckets.take("a") > 0


def test_buckets_forget_full_ones_first_when_too_many_are_kept() -> None:
    clock = Clock()
    buckets = Buckets(Limit(2, 10), clock, max_buckets=10)
    for key in range(10):
        buckets.take(f"old{key}")
    clock.now += 100  # every old bucket refilled
    buckets.take("busy")
    buckets.take("busy")
    buckets.take("new")  # the 12th key: the full ones go
    assert buckets.take("busy") > 0  # the empty one was kept
    assert len(buckets._held) <= 10


def limits(clock: Clock, **env: str) -> RateLimits:
    made = RateLimits.from_env(env)
    return RateLimits(made.classes, clock)


def test_an_identity_over_its_limit_is_refused_with_a_hint_and_others_are_not() -> None:
    clock = Clock()
    gate = limits(clock, PRESIDENT_RATE_CREATE_TABLE="2/60")
    gate.admit("CreateTable", "10.0.0.1", "alice")
    gate.admit("CreateTable", "10.0.0.1", "alice")
    refused = refusal(lambda: gate.admit("CreateTable", "10.0.0.1", "alice"))
    assert refused.status == Code.RESOURCE_EXHAUSTED
    assert refused.reason == RATE_LIMITED
    assert float(refused.metadata[RETRY_AFTER]) == pytest.approx(30.0)
    assert refused.metadata["limit"] == "create_table"
    assert "tables created" in refused.message and "30.0 s" in refused.message
    gate.admit("CreateTable", "10.0.0.1", "bob")  # same address, another account
    clock.now += 30
    gate.admit("CreateTable", "10.0.0.1", "alice")


def test_a_peer_over_its_limit_is_refused_whoever_calls() -> None:
    clock = Clock()
    gate = limits(clock, PRESIDENT_RATE_GUEST_PEER="3/60")
    for _ in range(3):
        gate.admit("CreateGuest", "10.0.0.2")
    refused = refusal(lambda: gate.admit("CreateGuest", "10.0.0.2"))
    assert refused.reason == RATE_LIMITED and "from your address" in refused.message
    gate.admit("CreateGuest", "10.0.0.3")


def test_logging_in_is_limited_per_account_name_from_any_address() -> None:
    gate = limits(Clock(), PRESIDENT_RATE_PASSWORD="2/60")
    gate.admit("LogIn", "10.0.0.4", "name:ada")
    gate.admit("LogIn", "10.0.0.5", "name:ada")
    refused = refusal(lambda: gate.admit("LogIn", "10.0.0.6", "name:ada"))
    assert "for this account" in refused.message


def test_limits_come_from_the_environment_scaled_or_off() -> None:
    gate = RateLimits.from_env({"PRESIDENT_RATE_READ": "off", "PRESIDENT_LIMITS_SCALE": "10"})
    assert gate.classes["read"].identity is None
    assert gate.classes["create_table"].identity == Limit(200, 60)
    for bad in ("30", "x/60", "0/60", "5/0"):
        with pytest.raises(SystemExit, match="PRESIDENT_RATE_SEAT"):
            RateLimits.from_env({"PRESIDENT_RATE_SEAT": bad})
    with pytest.raises(SystemExit, match="PRESIDENT_LIMITS_SCALE"):
        RateLimits.from_env({"PRESIDENT_LIMITS_SCALE": "-1"})


def test_the_rich_status_carries_retry_info_and_the_seconds() -> None:
    error = ServiceError(Code.RESOURCE_EXHAUSTED, RATE_LIMITED, "wait", {RETRY_AFTER: "2.5"})
    status = status_pb2.Status.FromString(to_status(error).trailing_metadata[0][1])
    kinds = {detail.type_url.rsplit("/", 1)[1] for detail in status.details}
    assert kinds == {"google.rpc.ErrorInfo", "google.rpc.RetryInfo"}
    retry = error_details_pb2.RetryInfo()
    next(d for d in status.details if d.Is(retry.DESCRIPTOR)).Unpack(retry)
    assert retry.retry_delay.ToNanoseconds() == 2_500_000_000


def test_peer_addresses_and_the_edge_s_word_for_the_browser_s() -> None:
    assert address_of("ipv4:192.0.2.7:5123") == "192.0.2.7"
    assert address_of("ipv6:[2001:db8:1:2:3:4:5:6]:443") == "2001:db8:1:2::/64"
    peers = Peers("s3cret")
    named = ((FORWARDED_PEER, "198.51.100.9"), (EDGE_SECRET, "s3cret"))
    assert peers.of("ipv4:127.0.0.1:9", named) == "198.51.100.9"
    forged = ((FORWARDED_PEER, "198.51.100.9"), (EDGE_SECRET, "guess"))
    assert peers.of("ipv4:127.0.0.1:9", forged) == "127.0.0.1"
    assert peers.of("ipv4:127.0.0.1:9", ((FORWARDED_PEER, "198.51.100.9"),)) == "127.0.0.1"
    assert Peers("").of("ipv4:127.0.0.1:9", named) == "127.0.0.1"  # no secret: none believed
    garbage = ((FORWARDED_PEER, "not an address"), (EDGE_SECRET, "s3cret"))
    assert peers.of("ipv4:127.0.0.1:9", garbage) == "127.0.0.1"


def test_streams_per_identity_and_per_peer_and_a_closed_one_frees_its_slot() -> None:
    streams = StreamLimits(per_identity=2, per_peer=3)
    with streams.holding("ann", "p1"), streams.holding("ann", "p1"):
        refused = refusal(lambda: streams.holding("ann", "p2").__enter__())
        assert refused.status == Code.RESOURCE_EXHAUSTED
        assert refused.reason == TOO_MANY_STREAMS and "for this account" in refused.message
        with streams.holding("bob", "p1"):
            refused = refusal(lambda: streams.holding("cy", "p1").__enter__())
            assert "from your address" in refused.message
        with streams.holding("cy", "p1"):  # bob's closed: a slot is free
            pass
    with streams.holding("ann", "p1"), streams.holding("ann", "p1"):
        pass  # all closed: all free again
    assert StreamLimits.from_env({"PRESIDENT_LIMITS_SCALE": "2"}).per_identity == 32


async def test_the_client_waits_out_a_rate_limit_then_sends_again() -> None:
    sent: list[float] = []

    async def send() -> str:
        sent.append(time.monotonic())
        if len(sent) < 3:
            raise GatewayError(grpc.StatusCode.RESOURCE_EXHAUSTED, RATE_LIMITED, "wait", 0.05)
        return "done"

    assert await honouring_retry_hints(send) == "done"
    assert len(sent) == 3 and sent[2] - sent[0] >= 0.1

    async def never() -> str:
        sent.append(time.monotonic())
        raise GatewayError(grpc.StatusCode.RESOURCE_EXHAUSTED, RATE_LIMITED, "wait", 0.0)

    sent.clear()
    with pytest.raises(GatewayError):
        await honouring_retry_hints(never, attempts=2)
    assert len(sent) == 3  # two waited out, the third raised

    async def denied() -> str:
        sent.append(time.monotonic())
        raise GatewayError(grpc.StatusCode.PERMISSION_DENIED, "READ_ONLY", "no")

    sent.clear()
    with pytest.raises(GatewayError):
        await honouring_retry_hints(denied)
    assert len(sent) == 1  # no hint: not sent again

    async def reaction_rate() -> str:
        sent.append(time.monotonic())
        raise GatewayError(grpc.StatusCode.RESOURCE_EXHAUSTED, "REACTION_RATE", "wait", 0.01)

    sent.clear()
    with pytest.raises(GatewayError):
        await honouring_retry_hints(reaction_rate)
    assert len(sent) == 1  # the table's own rule: the caller's to decide, not sent again


def test_tls_settings_refuse_half_a_configuration(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="PRESIDENT_TLS_KEY"):
        TlsSettings.from_env({"PRESIDENT_TLS_CERT": "cert.pem"})
    with pytest.raises(SystemExit, match="PRESIDENT_INTERNAL_TLS_CERT"):
        TlsSettings.from_env({"PRESIDENT_INTERNAL_TLS_CA": "ca.pem"})
    missing = TlsSettings.from_env(
        {
            "PRESIDENT_INTERNAL_TLS_CA": str(tmp_path / "ca.pem"),
            "PRESIDENT_INTERNAL_TLS_CERT": str(tmp_path / "service.pem"),
            "PRESIDENT_INTERNAL_TLS_KEY": str(tmp_path / "service-key.pem"),
        }
    )
    assert missing.client_cert == str(tmp_path / "service.pem")  # its own pair by default
    with pytest.raises(SystemExit, match="cannot read"):
        missing.server_credentials(public=False)
    assert TlsSettings.from_env({}).server_credentials(public=True) is None  # plaintext
    plain = TlsSettings.from_env({})
    assert plain.internal_credentials() is None and plain.gateway_credentials() is None


def test_streams_in_all_are_bounded_and_a_stream_with_no_identity_counts_for_none() -> None:
    streams = StreamLimits(per_identity=1, per_peer=5, total=2)
    with streams.holding("", "p1"), streams.holding("", "p1"):  # no identity: no identity cap
        refused = refusal(lambda: streams.holding("ann", "p2").__enter__())
        assert refused.status == Code.RESOURCE_EXHAUSTED
        assert refused.reason == STREAMS_FULL and RETRY_AFTER in refused.metadata
    with streams.holding("ann", "p2"):  # both closed: free again
        assert streams.open == 1
    assert streams.open == 0
