"""The table service's composition root: settings in, a runnable service out."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import grpc
import structlog

from president.hosting.host import TableHost
from president.hosting.signatures import BadKeyFile, Signer
from president.servicekit.command_stream import RECEIVE_BYTES
from president.servicekit.config.table import TableSettings
from president.servicekit.feed_stream import FeedSubjects
from president.servicekit.server import Service
from president.services.table.app import TableApp, count_appended
from president.services.table.commitments import (
    PUBLISH_SECONDS,
    CommitmentPublisher,
    publish_forever,
)
from president.services.table.dealer_client import GrpcDealer
from president.services.table.directory import TableDirectory
from president.services.table.feed_relay import FeedRelay
from president.services.table.handlers import TableServicer
from president.services.table.leases import Leases
from president.services.table.relay import OutboxRelay
from president.services.table.store_probe import StoreProbe
from president.store import AppendResult, EventStore, migrate
from president.table.v1 import table_pb2, table_pb2_grpc

WORKER_THREADS = 32
#: How often the outbox relay looks for other replicas' appends.
RELAY_POLL_SECONDS = 0.2


def operator_signer(key_file: str) -> Signer | None:
    """The operator's signing key from its file (None: no file set, nothing is signed)."""
    if not key_file:
        structlog.get_logger().warning(
            "no signing key: receipts and feed heads go unsigned (PRESIDENT_SIGNING_KEY_FILE)"
        )
        return None
    try:
        return Signer.from_file(key_file)
    except BadKeyFile as error:
        raise SystemExit(f"PRESIDENT_SIGNING_KEY_FILE: {error}") from None


def build(table_settings: TableSettings) -> Service:
    """Wire the store, the dealer client, the host, the relay and the servicer."""
    settings = table_settings.common
    migrate(settings.database_url)
    store = EventStore.from_url(settings.database_url)
    dealer = GrpcDealer(
        settings.address("dealer"),
        table_settings.dealer_call_seconds,
        settings.tls,
        settings.keepalive,
    )
    signer = operator_signer(table_settings.signing_key_file)
    relay = OutboxRelay(
        store,
        settings.subjects,
        settings.nats_url,
        poll_seconds=RELAY_POLL_SECONDS,
        signer=signer,
    )

    def appended(result: AppendResult) -> None:
        count_appended(result)
        relay.committed(result)

    host = TableHost(store, dealer, on_appended=appended, rapid_bots_wait=True)
    directory = TableDirectory(store)
    publisher = CommitmentPublisher(store)
    feed_relay = FeedRelay(
        store,
        FeedSubjects.beside(settings.subjects),
        settings.nats_url,
        poll_seconds=PUBLISH_SECONDS,
        signer=signer,
    )
    app = TableApp(store, host, directory)
    lease_seconds = table_settings.leases.seconds
    leases = None
    probe = StoreProbe(lambda: store.current_version("store-probe"), lease_seconds / 3)
    if lease_seconds > 0:
        address = table_settings.advertise or f"{settings.host}:{settings.table_port}"
        leases = Leases(
            settings.nats_url,
            settings.lease_bucket,
            address,
            lease_seconds,
            replicas=settings.stream_replicas,
            store_reached=lambda: probe.reached_within(lease_seconds),
        )
    servicer = TableServicer(app, leases, settings.tls, signer, settings.keepalive)

    def register(server: grpc.aio.Server) -> Sequence[str]:
        table_pb2_grpc.add_TableServiceServicer_to_server(servicer, server)
        return [table_pb2.DESCRIPTOR.services_by_name["TableService"].full_name]

    idle_seconds = table_settings.idle_seconds
    eviction = table_settings.eviction
    directory_seconds = table_settings.directory_seconds
    directory.followed = directory_seconds > 0

    async def follow_directory() -> None:
        """The table list brought up to date in the background: a list never folds."""
        log = structlog.get_logger().bind(service="table", component="directory")
        while True:
            try:
                await servicer.executor.in_worker(directory.refresh)
            except Exception as error:  # the database away: the next round tries again
                log.warning("table list refresh failed", error=repr(error))
            await asyncio.sleep(directory_seconds)

    async def evict_forever() -> None:
        """Finished and abandoned tables leave the list, memory and their leases."""
        log = structlog.get_logger().bind(service="table", component="eviction")
        while True:
            await asyncio.sleep(eviction.sweep_seconds)
            try:
                dropped = await servicer.executor.in_worker(lambda: app.evict(eviction))
            except Exception as error:  # the database away: the next sweep tries again
                log.warning("eviction sweep failed", error=repr(error))
                continue
            if dropped:
                log.info("tables evicted", count=len(dropped))
                if leases is not None:
                    await leases.release(dropped)

    background: set[asyncio.Task[None]] = set()

    async def prepare() -> None:
        """More worker threads than asyncio's default, the table list, then drop idle tables."""
        executor = ThreadPoolExecutor(WORKER_THREADS, thread_name_prefix="table")
        asyncio.get_running_loop().set_default_executor(executor)
        if directory.followed:  # lists read the rows at once, while this folds the rest
            background.add(asyncio.create_task(follow_directory(), name="table-directory"))
        else:
            await servicer.executor.in_worker(directory.refresh)
        feed = asyncio.create_task(
            publish_forever(publisher, servicer.executor.in_worker, PUBLISH_SECONDS),
            name="commitment-feed",
        )
        background.add(feed)
        background.add(asyncio.create_task(evict_forever(), name="eviction"))
        while True:
            await asyncio.sleep(min(idle_seconds, 60.0))
            await servicer.executor.in_worker(lambda: app.forget_idle(idle_seconds))

    async def close() -> None:
        for task in background:
            task.cancel()
        if leases is not None:
            await leases.close()
        await servicer.close()
        await relay.close()
        await feed_relay.close()
        dealer.close()
        store.close()

    return Service(
        name="table",
        port=settings.table_port,
        register=register,
        background=[
            prepare,
            relay.run,
            relay.run_fast_path,
            feed_relay.run,
            *([leases.run, probe.run] if leases is not None else []),
        ],
        on_stop=[close],
        # A client's command comes as it was sent, as large as a public request.
        options=[("grpc.max_receive_message_length", RECEIVE_BYTES)],
    )
