"""The audiences' end-to-end tests' stack and helpers: the six services, one audience
replica (with its spectators' HTTP door) and a NATS server of the module's own (to
restart); practice tables, spectators, and the check of what a spectator saw."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from president.client import GatewayClient
from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.launcher import NatsServer, Stack
from tests.support.gateway_truth import Store, Truth, check_change
from tests.support.servers import isolated_env

GAME_SECONDS = 90
#: Unsent bytes a spectator at the HTTP door may have here (the default is larger).
DOOR_BUFFER_KIB = 16
#: The page allowed to watch at the door.
PAGE_ORIGIN = "https://cards.example.org"
#: Rounds of each game here: enough changes to overflow a spectator that never reads.
ROUNDS = 3
#: Changes a spectator's inbox holds at this module's gateways (the default is larger).
INBOX = 64
#: Changes a resume replays at this module's gateways (the default: the whole history).
REPLAY_LIMIT = 64


@pytest.fixture(scope="module")
def audience_nats(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    server = NatsServer(tmp_path_factory.mktemp("audience-nats")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def audience_stack(
    tmp_path_factory: pytest.TempPathFactory, audience_nats: NatsServer
) -> Iterator[Stack]:
    """The six services on SQLite, and one audience replica."""
    workdir = tmp_path_factory.mktemp("audience-stack")
    stack = Stack(
        workdir,
        f"sqlite:///{workdir / 'president.db'}",
        audience_nats.url,
        {
            **isolated_env(),
            "PRESIDENT_AUDIENCE_INBOX": str(INBOX),
            "PRESIDENT_WATCH_REPLAY": str(REPLAY_LIMIT),
            "PRESIDENT_AUDIENCE_BUFFER_KIB": str(DOOR_BUFFER_KIB),
            "PRESIDENT_AUDIENCE_ALLOWED_ORIGINS": PAGE_ORIGIN,
        },
        audience_replicas=1,
    )
    try:
        yield stack.start()
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def audience_store(audience_stack: Stack) -> Iterator[Store]:
    store = Store(audience_stack)
    yield store
    store.close()


async def practice(stack: Stack) -> GatewayClient:
    """A practice table of a human host and table-side bots, started."""
    host = GatewayClient.connect(stack.gateway)
    await host.create_table(
        "house", options={"game_end": f"rounds:{ROUNDS}"}, seat_count=4, display_name="Host"
    )
    await host.start()
    return host


async def spectator(address: str, table_id: str) -> GatewayClient:
    watcher = GatewayClient.connect(address)
    await watcher.spectate(table_id)
    return watcher


async def until_over(changes: AsyncIterator[pb.WatchResponse]) -> list[pb.WatchResponse]:
    out: list[pb.WatchResponse] = []
    async for change in changes:
        out.append(change)
        if change.view.phase == "game_over":
            break
    return out


def check_watched(changes: list[pb.WatchResponse], truth: Truth, start: int) -> None:
    """Versions after ``start`` in order, each once, consecutive but where a snapshot marked
    skipped stands for the states between; every change free of leaks."""
    last = start
    for change in changes:
        if change.snapshot and not change.skipped:
            assert change.version >= last, (change.version, last)
        elif change.skipped:
            assert change.snapshot and change.version > last, (change.version, last)
        else:
            assert change.version == last + 1, (change.version, last)
        last = change.version
        check_change(change, truth, None)
