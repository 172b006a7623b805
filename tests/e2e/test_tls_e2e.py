"""The whole stack over TLS: the gateway's public door serves TLS, the services inside require
mutual TLS, and the web edge reaches the gateway over TLS; with certificates the test makes.

A game is played through it; a plaintext client is refused at every door,
and an internal service refuses a client without a certificate or with one
from another authority.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from president.client import GatewayClient, play_seat
from president.gateway.v1 import gateway_pb2_grpc
from president.players.v1 import players_pb2 as ppb
from president.servicekit import healthcheck
from president.servicekit.launcher import SERVICES, Stack
from tests.support.certificates import Authority, Pair
from tests.support.servers import isolated_env, sqlite_stack_in
from tests.support.web_edge import SERVICE_PATH

GAME_SECONDS = 90


class Certificates:
    def __init__(self, folder: Path) -> None:
        self.public = Authority("public", folder)
        self.internal = Authority("internal", folder)
        self.stranger = Authority("stranger", folder)
        self.gateway = self.public.issue("gateway")
        self.service = self.internal.issue("service")
        self.client = self.internal.issue("client")
        self.unknown = self.stranger.issue("intruder")


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return Certificates(tmp_path_factory.mktemp("certificates"))


@pytest.fixture(scope="module")
def tls_stack(certificates: Certificates, nats_url: str) -> Iterator[Stack]:
    """The six services (two table replicas with leases) and the web edge, every connection
    between them over (mutual) TLS."""
    workdir = certificates.public.folder.parent / "stack"
    env = {
        **isolated_env(),
        "PRESIDENT_WEB_STATIC_DIR": str(workdir),
        "PRESIDENT_TLS_CERT": str(certificates.gateway.cert_file),
        "PRESIDENT_TLS_KEY": str(certificates.gateway.key_file),
        "PRESIDENT_GATEWAY_TLS_CA": str(certificates.public.cert_file),
        "PRESIDENT_INTERNAL_TLS_CA": str(certificates.internal.cert_file),
        "PRESIDENT_INTERNAL_TLS_CERT": str(certificates.service.cert_file),
        "PRESIDENT_INTERNAL_TLS_KEY": str(certificates.service.key_file),
        "PRESIDENT_INTERNAL_TLS_CLIENT_CERT": str(certificates.client.cert_file),
        "PRESIDENT_INTERNAL_TLS_CLIENT_KEY": str(certificates.client.key_file),
    }
    # Two table replicas: the gateway dials them as one list, and they forward to each other.
    with sqlite_stack_in(workdir, nats_url, env, (*SERVICES, "web"), table_replicas=2) as stack:
        yield stack


async def test_a_game_plays_over_tls_and_mutual_tls(
    tls_stack: Stack, certificates: Certificates
) -> None:
    async with GatewayClient.connect(tls_stack.gateway, ca=certificates.public.cert) as client:
        await client.create_table(
            "classic", options={"game_end": "rounds:1"}, visibility="practice", display_name="Tia"
        )
        await client.start()
        log = await asyncio.wait_for(play_seat(client), GAME_SECONDS)
        assert log.last_view is not None and log.last_view.phase == "game_over"
        scores = await client.get_scores()  # scoring, read through the gateway over mTLS
        assert scores.games
    # The web edge reaches the gateway over TLS.
    async with httpx.AsyncClient(base_url=f"http://{tls_stack.address('web')}") as http:
        answer = await http.post(
            f"{SERVICE_PATH}/ListTables", json={}, headers={"content-type": "application/json"}
        )
        assert answer.status_code == 200, answer.text


async def create_guest(channel: grpc.aio.Channel) -> grpc.StatusCode:
    stub = gateway_pb2_grpc.GatewayServiceStub(channel)
    try:
        await stub.CreateGuest(ppb.CreateGuestRequest(display_name="Pat"), timeout=5)
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


async def test_the_gateway_refuses_plaintext_and_an_untrusted_certificate(
    tls_stack: Stack, certificates: Certificates
) -> None:
    async with grpc.aio.insecure_channel(tls_stack.gateway) as plain:
        assert await create_guest(plain) == grpc.StatusCode.UNAVAILABLE
    other = grpc.ssl_channel_credentials(root_certificates=certificates.stranger.cert)
    async with grpc.aio.secure_channel(tls_stack.gateway, other) as wrong:
        assert await create_guest(wrong) == grpc.StatusCode.UNAVAILABLE
    trusted = grpc.ssl_channel_credentials(root_certificates=certificates.public.cert)
    async with grpc.aio.secure_channel(tls_stack.gateway, trusted) as right:
        assert await create_guest(right) == grpc.StatusCode.OK


def health(address: str, credentials: grpc.ChannelCredentials | None) -> grpc.StatusCode:
    """The status of one health check of ``address`` (OK when it answered SERVING)."""
    with (
        grpc.secure_channel(address, credentials)
        if credentials is not None
        else grpc.insecure_channel(address)
    ) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            answer = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
        except grpc.RpcError as error:
            return error.code()  # type: ignore[attr-defined,no-any-return]
    assert answer.status == health_pb2.HealthCheckResponse.SERVING
    return grpc.StatusCode.OK


def with_client(roots: bytes, pair: Pair | None) -> grpc.ChannelCredentials:
    if pair is None:
        return grpc.ssl_channel_credentials(root_certificates=roots)
    return grpc.ssl_channel_credentials(
        root_certificates=roots, private_key=pair.key, certificate_chain=pair.cert
    )


@pytest.mark.parametrize("service", ["table", "table-2", "dealer", "scoring", "timer", "players"])
def test_an_internal_service_requires_a_certificate_of_its_authority(
    tls_stack: Stack, certificates: Certificates, service: str
) -> None:
    address = tls_stack.address(service)
    roots = certificates.internal.cert
    unavailable = grpc.StatusCode.UNAVAILABLE
    assert health(address, None) == unavailable  # plaintext
    assert health(address, with_client(roots, None)) == unavailable  # no client certificate
    assert health(address, with_client(roots, certificates.unknown)) == unavailable
    assert health(address, with_client(roots, certificates.client)) == grpc.StatusCode.OK


def test_the_health_probe_speaks_the_tls_of_its_process(
    tls_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    tls = {k: v for k, v in tls_stack.base_env().items() if "_TLS_" in k}
    for name in tls:
        monkeypatch.delenv(name, raising=False)
    table = healthcheck.Probe(tls_stack.address("table"))
    assert not healthcheck.check(table)[0]  # plaintext against mutual TLS
    for name, value in tls.items():
        if name.startswith("PRESIDENT_INTERNAL_TLS_"):  # a table container's variables
            monkeypatch.setenv(name, value)
    assert healthcheck.check(table) == (True, f"SERVING: {table.address} service=(server)")
    for name in ("PRESIDENT_TLS_CERT", "PRESIDENT_TLS_KEY", "PRESIDENT_GATEWAY_TLS_CA"):
        monkeypatch.setenv(name, tls[name])  # the gateway container's
    assert healthcheck.check(healthcheck.Probe(tls_stack.gateway))[0]
