"""The gateway's composition root: settings in, a runnable service out.

A replica is the players' door or, with ``PRESIDENT_GATEWAY_ROLE=audience``,
an audience replica that serves spectators only
(:mod:`president.services.gateway.api.roles`). The gateway verifies access tokens
with ``PRESIDENT_TOKEN_SECRET`` (shared with the players service) and trusted
issuers' JWTs with their keys (``PRESIDENT_TRUSTED_ISSUERS``). It follows
revocations on NATS and loads the current list from the players service at
start and on every reconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import Sequence

import grpc
import nats
import structlog
from nats.aio.client import Client
from nats.aio.msg import Msg

from president.gateway.v1 import gateway_pb2, gateway_pb2_grpc
from president.players.v1 import players_pb2
from president.servicekit.config.gateway import AUDIENCE, GatewaySettings
from president.servicekit.identity import AccessTokens
from president.servicekit.nats import servers as nats_servers
from president.servicekit.server import Service
from president.servicekit.table_client import TableClient
from president.services.gateway.api import audience_http
from president.services.gateway.api.audience_http import AudienceDoor
from president.services.gateway.api.handlers import GatewayServicer
from president.services.gateway.api.roles import AudienceOnly
from president.services.gateway.calls.accounts import Accounts
from president.services.gateway.calls.app import Gateway
from president.services.gateway.calls.commands import Commands
from president.services.gateway.calls.quick_play import QuickPlay
from president.services.gateway.calls.ratings import Ratings
from president.services.gateway.calls.seats import Seats
from president.services.gateway.calls.tournaments import Tournaments
from president.services.gateway.identity.auth import Verifier
from president.services.gateway.identity.issuers import TrustedIssuers, load_issuers
from president.services.gateway.identity.revocations import Revocations
from president.services.gateway.limits.admission import Admission
from president.services.gateway.streams import audience, watch
from president.services.gateway.streams.feed import FeedHub
from president.services.gateway.streams.wire import PreSerialized
from president.services.gateway.upstream.owners import LeaseOwners
from president.services.gateway.upstream.ports import GrpcPlayers, GrpcScoring, GrpcTournaments

RECONNECT_SECONDS = 1.0
#: How often the revocation list forgets revocations whose tokens all expired.
PRUNE_SECONDS = 60.0
log = structlog.get_logger(service="gateway")


def build(gateway_settings: GatewaySettings) -> Service:
    """Wire the table, scoring, players and tournament clients, the feeds (NATS), the
    identity verifier and the revocations into the servicer; refuse table commands at an
    audience replica."""
    settings = gateway_settings.common
    tls = settings.tls
    if not settings.token_secret:
        raise SystemExit(
            "PRESIDENT_TOKEN_SECRET is not set: the gateway verifies the players service's "
            "access tokens with it (the same secret on every replica and the players service)"
        )
    secret = settings.token_secret
    try:
        issuers = load_issuers(settings.trusted_issuers_file)
    except (OSError, ValueError) as error:
        raise SystemExit(str(error)) from None
    revocations = Revocations()
    verifier = Verifier(
        AccessTokens(secret), revocations, TrustedIssuers(issuers, time.time) if issuers else None
    )
    keepalive = settings.keepalive
    players = GrpcPlayers(settings.address("players"), tls=tls, keepalive=keepalive)
    accounts = Accounts(players, verifier, settings.access_ttl_seconds)
    owners = LeaseOwners(settings.lease_bucket) if gateway_settings.leases.seconds > 0 else None
    tables = TableClient(settings.address("table"), owners=owners, tls=tls, keepalive=keepalive)
    scoring = GrpcScoring(settings.address("scoring"), tls=tls, keepalive=keepalive)
    tournament_service = GrpcTournaments(
        settings.address("tournament"), tls=tls, keepalive=keepalive
    )
    role = gateway_settings.role
    audience.configure(gateway_settings.audience)
    watch.configure(gateway_settings.audience)
    audience_http.configure(gateway_settings.door)
    hub = FeedHub(tables, settings.subjects, gateway_settings.waits.rules())
    id_key = hashlib.sha256(b"president-gateway-ids:" + secret.encode()).digest()
    commands = Commands(tables, hub, id_key)
    gateway = Gateway(tables, scoring, hub, commands, id_key, gateway_settings.operator_keys)
    seats = Seats(tables, hub, commands)
    admission = Admission.configured(gateway_settings.limits, settings.edge_secret)
    ratings = Ratings(scoring, id_key, players)
    client: list[Client] = []
    reloads: set[asyncio.Task[None]] = set()

    async def load_revocations() -> None:
        """The players service's current list (retried until it answers)."""
        while True:
            try:
                found = await players.revocations()
            except Exception as error:
                log.warning("players service not reachable yet", error=type(error).__name__)
                await asyncio.sleep(RECONNECT_SECONDS)
                continue
            revocations.load((item.session_id, item.until) for item in found)
            return

    async def revoked(message: Msg) -> None:
        try:
            item = players_pb2.Revocation.FromString(message.data)
        except Exception:
            log.warning("a revocation message could not be read")
            return
        revocations.revoke(item.session_id, item.until)

    async def follow_nats() -> None:
        """Connect to NATS (retrying until it is there); feeds poll the store meanwhile."""

        async def disconnected() -> None:
            hub.detach()

        async def reconnected() -> None:
            if client:
                await hub.attach(client[0])
            # What was published while we were away (in the background: the
            # players service may be away too).
            reloads.add(asyncio.create_task(load_revocations()))
            reloads.difference_update({task for task in reloads if task.done()})

        while not client:
            try:
                connection = await nats.connect(
                    nats_servers(settings.nats_url),
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
            await connection.subscribe(settings.revocations_subject, cb=revoked)
            if owners is not None:
                owners.attach(connection)
            await hub.attach(connection)
            log.info("NATS connected", url=settings.nats_url)
        await load_revocations()
        while True:
            await asyncio.sleep(PRUNE_SECONDS)
            revocations.prune()

    background = [follow_nats, hub.maintain]
    door_port = gateway_settings.door.port
    if door_port >= 0:  # an audience replica's (GatewaySettings checks)
        door = AudienceDoor(
            hub,
            verifier,
            admission,
            gateway_settings.door.allowed_origins,
            settings.edge_secret,
        )

        door_tls = tls.public_ssl_context()

        async def open_door() -> None:
            await door.serve(settings.host, door_port, tls=door_tls)

        background.append(open_door)

    def register(server: grpc.aio.Server) -> Sequence[str]:
        gateway_pb2_grpc.add_GatewayServiceServicer_to_server(
            GatewayServicer(
                gateway,
                seats,
                verifier,
                accounts,
                ratings,
                QuickPlay(tables, seats),
                admission,
                Tournaments(tournament_service, scoring),
            ),
            server,
        )
        return [gateway_pb2.DESCRIPTOR.services_by_name["GatewayService"].full_name]

    async def close() -> None:
        await hub.close()
        if client:
            with contextlib.suppress(Exception):
                await client[0].close()
        await tables.close()
        await scoring.close()
        await players.close()
        await tournament_service.close()

    return Service(
        name="gateway",
        port=settings.gateway_port,
        register=register,
        background=background,
        on_stop=[close],
        # The Watch and Session streams yield bytes; an audience replica acts at no table.
        interceptors=[PreSerialized(), *([AudienceOnly()] if role == AUDIENCE else [])],
        public=True,
        # HTTP/2 bounds each connection's open streams (the web edge's one connection
        # carries every browser's: this is its total).
        options=[("grpc.max_concurrent_streams", gateway_settings.limits.streams.per_connection)],
    )
