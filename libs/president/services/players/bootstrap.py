"""The players service's composition root: settings in, a runnable service out.

Revocations are published on core NATS (``PRESIDENT_REVOCATIONS_SUBJECT``),
one ``Revocation`` message each; a gateway that was disconnected meanwhile
loads the list again (``ListRevocations``) when it reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import grpc
import nats
import structlog
from nats.aio.client import Client

from president.players.v1 import players_pb2, players_pb2_grpc
from president.servicekit.config import Settings
from president.servicekit.identity import AccessTokens
from president.servicekit.nats import servers as nats_servers
from president.servicekit.server import Service
from president.services.players import names
from president.services.players.app import Lifetimes, Players
from president.services.players.handlers import PlayersServicer
from president.services.players.store import PlayersStore
from president.store import migrate

RECONNECT_SECONDS = 1.0
PUBLISH_SECONDS = 2
log = structlog.get_logger(service="players")


def build(settings: Settings) -> Service:
    """Wire the players database, the token signer and the NATS publisher into the servicer."""
    if not settings.token_secret:
        raise SystemExit(
            "PRESIDENT_TOKEN_SECRET is not set: the players service signs access tokens with it "
            "and the gateways verify them with the same secret"
        )
    migrate(settings.players_database_url)
    store = PlayersStore(settings.players_database_url)
    filled, alike = store.fill_skeletons(names.skeleton)
    if filled or alike:
        log.info("account name skeletons filled", filled=filled, look_alikes=alike)
    client: list[Client] = []
    loop: list[asyncio.AbstractEventLoop] = []

    async def send(session_ids: list[str], until: int) -> None:
        for session_id in session_ids:
            data = players_pb2.Revocation(session_id=session_id, until=until).SerializeToString()
            await client[0].publish(settings.revocations_subject, data)
        await client[0].flush(timeout=PUBLISH_SECONDS)

    def publish(session_ids: list[str], until: int) -> None:
        """Called from the call's worker thread: publish on the service's loop, and answer
        the call only once NATS has the revocations (gateways refuse the session at once)."""
        if not client or not loop:
            log.warning("NATS not connected: revocations reach gateways at their next reload")
            return
        done = asyncio.run_coroutine_threadsafe(send(session_ids, until), loop[0])
        try:
            done.result(timeout=PUBLISH_SECONDS)
        except Exception as error:
            log.warning("revocations not published", error=type(error).__name__)

    players = Players(
        store,
        AccessTokens(settings.token_secret),
        Lifetimes(settings.access_ttl_seconds, settings.refresh_ttl_seconds),
        on_revoked=publish,
    )

    async def connect_nats() -> None:
        loop.append(asyncio.get_running_loop())
        while not client:
            try:
                client.append(
                    await nats.connect(
                        nats_servers(settings.nats_url),
                        name="players",
                        max_reconnect_attempts=-1,
                        reconnect_time_wait=0.5,
                        connect_timeout=5,
                    )
                )
            except Exception as error:
                log.warning("NATS not reachable yet", url=settings.nats_url, error=repr(error))
                await asyncio.sleep(RECONNECT_SECONDS)
        await asyncio.Event().wait()

    def register(server: grpc.aio.Server) -> Sequence[str]:
        players_pb2_grpc.add_PlayersServiceServicer_to_server(PlayersServicer(players), server)
        return [players_pb2.DESCRIPTOR.services_by_name["PlayersService"].full_name]

    async def close() -> None:
        if client:
            with contextlib.suppress(Exception):
                await client[0].flush(timeout=2)
                await client[0].close()
        store.close()

    return Service(
        name="players",
        port=settings.players_port,
        register=register,
        background=[connect_nats],
        on_stop=[close],
    )
