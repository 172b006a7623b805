"""The tournament service's composition root: settings in, a runnable service out.

The service's clock is read here, in one place (:func:`now`): every command
is decided and stamped at the time it gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import grpc
from nats.aio.client import Client

from president.servicekit.config import Settings
from president.servicekit.nats import connect
from president.servicekit.server import Service
from president.servicekit.table_client import TableClient
from president.services.tournament.app import Tournaments
from president.services.tournament.draw_secrets import DrawSecrets
from president.services.tournament.handlers import TournamentServicer
from president.services.tournament.runner import NatsTableEnds, RoundRunner
from president.store import EventStore, migrate
from president.tournaments.v1 import tournaments_pb2, tournaments_pb2_grpc


def now() -> datetime:
    """The tournament service's clock: the time every command is decided at."""
    return datetime.now(UTC)


def build(settings: Settings) -> Service:
    """Wire the event store (the tables' own; tournaments have streams of their own) into
    the servicer, and start the round runner (its draw secrets in the same database, the
    tables opened through the table service)."""
    migrate(settings.database_url)
    store = EventStore.from_url(settings.database_url)
    tournaments = Tournaments(store, now)
    secrets = DrawSecrets(settings.database_url)
    tables = TableClient(settings.address("table"), tls=settings.tls, keepalive=settings.keepalive)
    subjects = settings.subjects

    async def connect_nats() -> Client:
        client, _ = await connect(settings.nats_url, "tournament")
        return client

    ends = NatsTableEnds(connect_nats, subjects.table)
    runner = RoundRunner(tournaments, secrets, tables, store, now, ends=ends)

    def register(server: grpc.aio.Server) -> Sequence[str]:
        tournaments_pb2_grpc.add_TournamentServiceServicer_to_server(
            TournamentServicer(tournaments), server
        )
        return [tournaments_pb2.DESCRIPTOR.services_by_name["TournamentService"].full_name]

    async def close() -> None:
        await ends.close()
        await tables.close()
        secrets.close()
        store.close()

    return Service(
        name="tournament",
        port=settings.tournament_port,
        register=register,
        background=[runner.run],
        on_stop=[close],
    )
