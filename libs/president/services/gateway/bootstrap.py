"""The gateway's composition root: settings in, a runnable service out."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Sequence

import grpc
import nats
import structlog
from nats.aio.client import Client

from president.gateway.v1 import gateway_pb2, gateway_pb2_grpc
from president.servicekit.config import Settings, env_seconds
from president.servicekit.server import Service
from president.services.gateway import foresight
from president.services.gateway.app import Gateway
from president.services.gateway.auth import Tokens, random_secret
from president.services.gateway.feed import FeedHub
from president.services.gateway.handlers import GatewayServicer
from president.services.gateway.owners import LeaseOwners
from president.services.gateway.upstream import GrpcScoring, GrpcTables
from president.services.gateway.wire import PreSerialized

RECONNECT_SECONDS = 1.0


RANDOM_SECRET_WARNING = (
    "PRESIDENT_TOKEN_SECRET is not set: using a random secret, so gateway replicas "
    "cannot share tokens and every token dies with this process"
)


def token_secret(settings: Settings) -> tuple[str, bool]:
    """PRESIDENT_TOKEN_SECRET, or a random one (True: tokens then die with the process)."""
    if settings.token_secret:
        return settings.token_secret, False
    return random_secret(), True


def build(settings: Settings) -> Service:
    """Wire the table and scoring clients, the feeds (NATS) and the tokens into the servicer;
    turn the foresight on."""
    secret, random = token_secret(settings)
    tokens = Tokens(secret, settings.token_ttl_seconds)
    owners = (
        LeaseOwners(settings.lease_bucket)
        if env_seconds("PRESIDENT_TABLE_LEASE_SECONDS", 0.0) > 0
        else None
    )
    tables = GrpcTables(settings.address("table"), owners=owners)
    scoring = GrpcScoring(settings.address("scoring"))
    hub = FeedHub(tables, settings.subjects)
    foresight.enable(tables, hub)  # plays' changes built while the table service commits
    id_key = hashlib.sha256(b"president-gateway-ids:" + secret.encode()).digest()
    gateway = Gateway(tables, scoring, tokens, hub, id_key)
    client: list[Client] = []

    async def follow_nats() -> None:
        """Connect to NATS (retrying until it is there); feeds poll the store meanwhile."""
        log = structlog.get_logger().bind(service="gateway")
        if random:
            log.warning(RANDOM_SECRET_WARNING)

        async def disconnected() -> None:
            hub.detach()

        async def reconnected() -> None:
            if client:
                await hub.attach(client[0])

        while not client:
            try:
                connection = await nats.connect(
                    settings.nats_url,
                    name="gateway",
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.5,
                    connect_timeout=5,
                    disconnected_cb=disconnected,
                    reconnected_cb=reconnected,
                )
            except Exception as error:
                log.warning("NATS not reachable yet", url=settings.nats_url, error=repr(error))
                await asyncio.sleep(RECONNECT_SECONDS)
                continue
            client.append(connection)
            if owners is not None:
                owners.attach(connection)
            await hub.attach(connection)
            log.info("NATS connected", url=settings.nats_url)
        await asyncio.Event().wait()

    def register(server: grpc.aio.Server) -> Sequence[str]:
        gateway_pb2_grpc.add_GatewayServiceServicer_to_server(
            GatewayServicer(gateway, tokens), server
        )
        return [gateway_pb2.DESCRIPTOR.services_by_name["GatewayService"].full_name]

    async def close() -> None:
        await hub.close()
        if client:
            with contextlib.suppress(Exception):
                await client[0].close()
        await tables.close()
        await scoring.close()

    return Service(
        name="gateway",
        port=settings.gateway_port,
        register=register,
        background=[follow_nats, hub.maintain],
        on_stop=[close],
        interceptors=[PreSerialized()],  # the Watch and Session streams yield bytes
    )
