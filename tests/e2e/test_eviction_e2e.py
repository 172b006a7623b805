"""Finished and abandoned tables leave the lobby and the table service's memory, on real servers.

The services a table's life needs (table, timer, players, gateway; no deal
is dealt here) run as processes on a SQLite file with short times: a table
closed for 1 s is finished, one where nothing happened for 6 s is abandoned.
Through the gateway: a table every person left closes (the timer's
empty-table grace, 1 s) and leaves the lobby a second later while an
untouched lobby table is still listed; that one leaves after its 6 s. Then
each is gone: GetTable and JoinTable answer NOT_FOUND TABLE_GONE and store
nothing; the table service holds neither in memory (its
``president_active_tables`` gauge); the logs stay and the audit verifies them.
"""

from __future__ import annotations

import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from president.audit import verify_table
from president.client import GatewayClient
from president.hosting.streams import stream_id
from president.servicekit.launcher import Stack
from president.store import EventStore
from tests.support.gateway_truth import expect
from tests.support.service_stack import service_stack

FINISHED_SECONDS = 1
ABANDONED_SECONDS = 6
GONE = grpc.StatusCode.NOT_FOUND
SERVICES_USED = ("table", "timer", "players", "gateway")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, nats_url: str) -> Iterator[Stack]:
    env = {
        "PRESIDENT_FINISHED_TABLE_SECONDS": str(FINISHED_SECONDS),
        "PRESIDENT_ABANDONED_TABLE_SECONDS": str(ABANDONED_SECONDS),
        "PRESIDENT_EMPTY_TABLE_SECONDS": "1",
    }
    workdir: Path = tmp_path_factory.mktemp("eviction")
    database = f"sqlite:///{workdir / 'president.db'}"
    with service_stack(workdir, database, nats_url, SERVICES_USED, env) as started:
        yield started


def active_tables(stack: Stack) -> float:
    """The table service's gauge of the tables it holds in memory."""
    url = f"http://127.0.0.1:{stack.metrics_ports['table']}/metrics"
    with urllib.request.urlopen(url, timeout=5) as response:
        text = response.read().decode()
    found = re.search(r"^president_active_tables (\S+)$", text, re.MULTILINE)
    assert found, "no president_active_tables gauge"
    return float(found.group(1))


async def listed(client: GatewayClient) -> set[str]:
    return {table.table_id for table in await client.list_tables()}


async def wait_for(probe: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while True:
        if await probe():  # type: ignore[operator]
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s: {what}")
        time.sleep(0.2)


async def test_finished_then_abandoned_tables_leave_the_lobby_and_memory(stack: Stack) -> None:
    async with GatewayClient.connect(stack.gateway) as host:
        await host.create_guest("Host")
        other = host.sibling()
        await other.create_guest("Other")
        left = await host.create_table("classic", visibility="public", display_name="Host")
        await host.add_bot()
        await host.leave()  # nobody is left: the timer closes it after the empty-table grace
        untouched = await other.create_table("classic", visibility="public", display_name="Other")
        assert {left.table_id, untouched.table_id} <= await listed(other)
        store = EventStore.from_url(stack.database_url)
        try:
            closed_at = time.monotonic()

            async def finished_gone() -> bool:
                return left.table_id not in await listed(other)

            await wait_for(finished_gone, 10, "the closed table to leave the lobby")
            assert untouched.table_id in await listed(other)  # not abandoned yet
            assert time.monotonic() - closed_at < ABANDONED_SECONDS

            async def abandoned_gone() -> bool:
                return untouched.table_id not in await listed(other)

            await wait_for(abandoned_gone, ABANDONED_SECONDS + 10, "the untouched table to go")

            for table_id in (left.table_id, untouched.table_id):
                version = store.current_version(stream_id(table_id))
                seen = other.sibling(table_id=table_id)
                await seen.create_guest("Late")
                refused = await expect(seen.get_table(), GONE, "TABLE_GONE")
                assert "audit" in refused.message
                await expect(seen.join(table_id, "Late"), GONE, "TABLE_GONE")
                assert store.current_version(stream_id(table_id)) == version  # nothing stored
                report = verify_table(store.read_stream(stream_id(table_id)))
                assert report.ok, report.problem
            assert active_tables(stack) == 0
        finally:
            store.close()
