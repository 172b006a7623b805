"""The web edge's parts without processes: its settings, and a gateway refusal as Connect's."""

from __future__ import annotations

from typing import Any, cast

import grpc
import pytest
from connectrpc.code import Code
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from president.servicekit.config.web import WebSettings
from president.servicekit.stream_limits import StreamLimits
from president.services.web.forward import UNREACHABLE, refusal
from president.services.web.upstream import Upstream, identity_key, peer_key


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRESIDENT_WEB_ALLOWED_ORIGINS", " https://club.example/, http://a.test ")
    monkeypatch.setenv("PRESIDENT_GATEWAY_ADDRESS", "gateway:50051")
    settings = WebSettings.from_env()
    assert settings.allowed_origins == ("https://club.example", "http://a.test")
    assert settings.gateway == "gateway:50051"
    assert not settings.tls


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("PRESIDENT_WEB_ALLOWED_ORIGINS", "*", "never '*'"),
        ("PRESIDENT_WEB_ALLOWED_ORIGINS", "club.example", "in full"),
        ("PRESIDENT_WEB_TLS_CERT", "cert.pem", "both"),
        ("PRESIDENT_WEB_MAX_BODY_BYTES", "0", "at least 1"),
        ("PRESIDENT_WEB_PORT", "eighty", "whole number"),
    ],
)
def test_bad_settings_stop_the_edge_with_a_sentence(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, says: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as stopped:
        WebSettings.from_env()
    assert says in str(stopped.value)


def _failed(code: grpc.StatusCode, message: str, reason: str = "") -> grpc.aio.AioRpcError:
    trailing = grpc.aio.Metadata()
    if reason:
        detail = any_pb2.Any()
        detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="president.cards"))
        status = status_pb2.Status(code=code.value[0], message=message, details=[detail])
        trailing.add("grpc-status-details-bin", status.SerializeToString())
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), trailing, details=message)


def test_a_gateway_refusal_keeps_its_code_sentence_and_reason() -> None:
    error = refusal(_failed(grpc.StatusCode.FAILED_PRECONDITION, "not your turn", "NOT_YOUR_TURN"))
    assert error.code == Code.FAILED_PRECONDITION
    assert error.message == "not your turn"
    (detail,) = error.details
    assert detail.type_name == "google.rpc.ErrorInfo"
    assert error_details_pb2.ErrorInfo.FromString(detail.message_bytes).reason == "NOT_YOUR_TURN"


def test_every_grpc_code_has_its_connect_code() -> None:
    for status in grpc.StatusCode:
        if status == grpc.StatusCode.OK:
            continue
        error = refusal(_failed(status, "x", "R"))
        assert error.code.name.replace("CANCELED", "CANCELLED") == status.name


def test_an_unreachable_gateway_says_so() -> None:
    error = refusal(_failed(grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses"))
    assert error.code == Code.UNAVAILABLE and error.message == UNREACHABLE


def test_the_edge_counts_streams_per_token_and_address_and_spreads_them() -> None:
    """Each stream goes on the connection carrying the fewest; a token is counted by its
    digest (never logged whole), an IPv6 browser by its /64."""
    limits = StreamLimits(per_identity=4, per_peer=4, total=4)
    upstream = Upstream(cast(Any, None), [cast(Any, None)] * 2, limits)
    with upstream.holding("a", "p") as first, upstream.holding("a", "p") as second:
        assert {first, second} == {0, 1}
        with upstream.holding("b", "q") as third:
            assert third in (0, 1)
    assert identity_key("Bearer t") != "Bearer t" and identity_key("") == ""
    assert peer_key("[2001:db8::1]:443") == peer_key("[2001:db8::2]:80") == "2001:db8::/64"
    assert peer_key("198.51.100.7:5000") == "198.51.100.7"
