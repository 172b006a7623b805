"""The timer's composition root: settings in, a runnable service out."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import grpc
import structlog
from nats.aio.client import Client

from president.servicekit.config.timer import TimerSettings
from president.servicekit.metrics import TIMER_OVERDUE
from president.servicekit.nats import close_all, connect, ensure_stream
from president.servicekit.partition import Partition
from president.servicekit.server import Service
from president.servicekit.table_client import TableClient
from president.services.timer.deadlines import Clocks, DeadlineBoard
from president.services.timer.follower import Follower
from president.services.timer.handlers import TimerServicer
from president.services.timer.scheduler import Scheduler
from president.timer.v1 import timer_pb2, timer_pb2_grpc

RECONNECT_SECONDS = 1.0
log = structlog.get_logger(service="timer")


def build(timer_settings: TimerSettings) -> Service:
    """Wire the stream follower, the deadline board, the scheduler and the servicer."""
    settings = timer_settings.common
    partition = Partition.parse(settings.timer_partition, "PRESIDENT_TIMER_PARTITION")
    board = DeadlineBoard()
    waiting = timer_settings.waits.rules()
    clocks = Clocks(board, partition, waiting)
    TIMER_OVERDUE.set_function(lambda: board.overdue(datetime.now(UTC)))
    table = TableClient(settings.address("table"), tls=settings.tls, keepalive=settings.keepalive)
    nats_clients: list[Client] = []

    async def follow() -> None:
        scheduler = Scheduler(clocks, table)
        follower = Follower(clocks, table, scheduler.notify, scheduler.ready.set)
        firing = asyncio.create_task(scheduler.run(), name="timer-scheduler")
        try:
            while True:
                try:
                    client, js = await connect(settings.nats_url, "timer")
                    nats_clients.append(client)
                    await ensure_stream(js, settings.subjects)
                    await follower.follow(js, settings.subjects, client)
                except asyncio.CancelledError:
                    raise
                except Exception as error:  # NATS away: connect again, replay skips known events
                    log.warning("stream follower restarts", error=repr(error))
                    await close_all(nats_clients)
                    await asyncio.sleep(RECONNECT_SECONDS)
        finally:
            firing.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await firing

    idle = timedelta(seconds=timer_settings.idle_seconds)

    async def tidy() -> None:
        """Drop tables that have had no deadline and no event for a while."""
        while True:
            await asyncio.sleep(min(idle.total_seconds(), 60.0))
            dropped = clocks.forget_idle(datetime.now(UTC) - idle)
            if dropped:
                log.info("idle tables forgotten", tables=len(dropped))

    def register(server: grpc.aio.Server) -> Sequence[str]:
        timer_pb2_grpc.add_TimerServiceServicer_to_server(TimerServicer(board), server)
        return [timer_pb2.DESCRIPTOR.services_by_name["TimerService"].full_name]

    async def close() -> None:
        await close_all(nats_clients)
        await table.close()

    return Service(
        name="timer",
        port=settings.timer_port,
        register=register,
        background=[follow, tidy],
        on_stop=[close],
    )
