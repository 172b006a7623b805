"""Two table replicas with leases behind one gateway address list (what
``president run --table-replicas 2`` starts): kill -9 of the replica holding a table's
lease, and the table goes on through the other to the end of its game."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest

from president.client import GatewayClient, SeatLog, play_seat
from president.servicekit.config import Settings
from president.servicekit.launcher import Stack
from tests.support.servers import delete_stream, isolated_env

pytestmark = pytest.mark.slow
GAME_SECONDS = 120


@pytest.fixture
def replicas(tmp_path: Path, nats_url: str) -> Iterator[Stack]:
    env = isolated_env()
    stack = Stack(tmp_path, f"sqlite:///{tmp_path / 'president.db'}", nats_url, env)
    stack.table_replicas = 2
    try:
        yield stack.start()
    finally:
        stack.stop()
        asyncio.run(delete_stream(nats_url, env["PRESIDENT_STREAM"]))


async def holder(stack: Stack, table_id: str) -> str:
    """The address in the table's lease."""
    bucket = Settings(stream_name=stack.env["PRESIDENT_STREAM"]).lease_bucket
    client = await nats.connect(stack.nats_url)
    try:
        entry = await (await client.jetstream().key_value(bucket)).get(table_id)
        return (entry.value or b"").decode()
    finally:
        await client.close()


async def fail_over(stack: Stack) -> tuple[SeatLog, str]:
    assert stack.base_env()["PRESIDENT_TABLE_ADDRESS"].count(",") == 1
    client = GatewayClient.connect(stack.gateway)
    try:
        await client.create_table(
            "house", options={"game_end": "rounds:3"}, seat_count=4, display_name="Host"
        )
        view = await client.get_table()
        for _ in range(sum(not seat.occupied for seat in view.seats)):
            await client.add_bot()
        await client.start()
        log = SeatLog()
        playing = asyncio.create_task(play_seat(client, host_rounds=3, log=log))
        while log.actions < 3:
            await asyncio.sleep(0.05)
        held = await holder(stack, client.table_id)
        killed = next(name for name in stack.replicas if stack.address(name) == held)
        stack.stop_one(killed, kill=True)
        done = await asyncio.wait_for(playing, GAME_SECONDS)
        return done, killed
    finally:
        await client.close()


def test_a_table_goes_on_when_its_replica_dies(replicas: Stack) -> None:
    log, killed = asyncio.run(fail_over(replicas))
    assert log.last_view is not None and log.last_view.phase == "game_over"
    assert killed in replicas.replicas
