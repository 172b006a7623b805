"""Scoring's composition root: settings in, a runnable service out."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import grpc
import structlog
from nats.aio.client import Client

from president.scoring.v1 import scoring_pb2, scoring_pb2_grpc
from president.servicekit.config import Settings
from president.servicekit.nats import close_all, connect, ensure_stream
from president.servicekit.partition import Partition
from president.servicekit.server import Service
from president.servicekit.table_client import TableClient
from president.services.scoring.consumer import Consumer
from president.services.scoring.handlers import ScoringServicer
from president.services.scoring.store import ScoringStore
from president.store import migrate

RECONNECT_SECONDS = 1.0
log = structlog.get_logger(service="scoring")


def build(settings: Settings) -> Service:
    """Wire scoring's database, the stream consumer and the servicer."""
    partition = Partition.parse(settings.scoring_partition, "PRESIDENT_SCORING_PARTITION")
    migrate(settings.scoring_database_url)
    store = ScoringStore(settings.scoring_database_url)
    table = TableClient(settings.address("table"), tls=settings.tls, keepalive=settings.keepalive)
    consumer = Consumer(store, table, settings.scoring_durable, partition)
    nats_clients: list[Client] = []

    async def consume() -> None:
        while True:
            try:
                client, js = await connect(settings.nats_url, "scoring")
                nats_clients.append(client)
                await ensure_stream(js, settings.subjects)
                await consumer.run(js, settings.subjects)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # NATS away: connect again; the durable keeps our place
                log.warning("consumer restarts", error=repr(error))
                await close_all(nats_clients)
                await asyncio.sleep(RECONNECT_SECONDS)

    def register(server: grpc.aio.Server) -> Sequence[str]:
        scoring_pb2_grpc.add_ScoringServiceServicer_to_server(ScoringServicer(store), server)
        return [scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"].full_name]

    async def close() -> None:
        await close_all(nats_clients)
        await table.close()
        store.close()

    return Service(
        name="scoring",
        port=settings.scoring_port,
        register=register,
        background=[consume],
        on_stop=[close],
    )
