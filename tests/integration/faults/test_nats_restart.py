"""The timer after a NATS restart (a nats-server of the test's own, stopped and started
again on its port with its data): it subscribes again as soon as the connection is back,
so a table created after the restart has its deadline at once, not after the client
library's heartbeat check (15 s and more)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from president.servicekit.launcher import NatsServer, Stack
from president.timer.v1 import timer_pb2 as mpb
from president.timer.v1 import timer_pb2_grpc
from tests.support.service_stack import Tables, service_stack, wait_until

pytestmark = pytest.mark.slow
#: Well under the heartbeat recovery the follower waited for before (17-18 s seen).
BACK_WITHIN_SECONDS = 8.0


@pytest.fixture
def nats(tmp_path: Path) -> Iterator[NatsServer]:
    server = NatsServer(tmp_path / "nats").start()
    try:
        yield server
    finally:
        server.stop()


def deadlines(stack: Stack, table_id: str) -> list[mpb.Deadline]:
    with grpc.insecure_channel(stack.address("timer")) as channel:
        stub = timer_pb2_grpc.TimerServiceStub(channel)
        response = stub.ListDeadlines(mpb.ListDeadlinesRequest(table_id=table_id), timeout=5)
    return list(response.deadlines)


def table_with_a_human(tables: Tables, table_id: str) -> None:
    tables.create(table_id, "classic", 4, turn_seconds="600", game_end="rounds:3")
    tables.sit(table_id, 0, f"{table_id}-rita", bot=False)
    for seat in (1, 2, 3):
        tables.sit(table_id, seat, f"{table_id}-bot{seat}", bot=True)
    tables.start(table_id)


def test_the_timer_follows_again_as_soon_as_nats_is_back(tmp_path: Path, nats: NatsServer) -> None:
    workdir = tmp_path / "stack"
    workdir.mkdir()
    with service_stack(
        workdir, f"sqlite:///{workdir / 'president.db'}", nats.url, ("dealer", "table", "timer")
    ) as stack:
        tables = Tables(stack.address("table"))
        try:
            table_with_a_human(tables, "before")
            wait_until(lambda: deadlines(stack, "before"), 15, "the first table's deadline")
            nats.stop()
            time.sleep(1.0)
            nats.start()
            table_with_a_human(tables, "after")
            wait_until(
                lambda: deadlines(stack, "after"),
                BACK_WITHIN_SECONDS,
                "the deadline of a table created after the NATS restart",
            )
        finally:
            tables.close()
