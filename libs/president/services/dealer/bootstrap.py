"""The dealer's composition root: settings in, a runnable service out."""

from __future__ import annotations

from collections.abc import Sequence

import grpc

from president.dealer.v1 import dealer_pb2, dealer_pb2_grpc
from president.servicekit.config import Settings
from president.servicekit.server import Service
from president.services.dealer.handlers import DealerServicer
from president.services.dealer.vault import SecretVault
from president.store import EventStore, migrate


def build(settings: Settings) -> Service:
    """Wire the vault (its own database) and the event store (read-only use) into the servicer."""
    migrate(settings.dealer_database_url)
    migrate(settings.database_url)
    events = EventStore.from_url(settings.database_url)
    vault = SecretVault(settings.dealer_database_url, events)

    def register(server: grpc.aio.Server) -> Sequence[str]:
        dealer_pb2_grpc.add_DealerServiceServicer_to_server(DealerServicer(vault), server)
        return [dealer_pb2.DESCRIPTOR.services_by_name["DealerService"].full_name]

    async def close() -> None:
        vault.close()
        events.close()

    return Service(name="dealer", port=settings.dealer_port, register=register, on_stop=[close])
