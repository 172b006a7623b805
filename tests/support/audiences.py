"""The audiences' end-to-end tests' stack and helpers: the seven services, one audience
replica (with its spectators' HTTP door) and a NATS server of the module's own (to
restart); practice tables, spectators, and the check of what a spectator saw."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field

import pytest

from president.client import GatewayClient, GatewayError, SeatLog, play_seat
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
    """The seven services on SQLite, and one audience replica."""
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


#: A spectator's stream of one table from a version (at a replica's gRPC Watch or its door).
Watching = Callable[[int], AsyncIterator[pb.WatchResponse]]


async def check_resumes(store: Store, host: GatewayClient, watch: Watching, back: int) -> None:
    """While the host plays: resumed ``back`` versions ago, every change after it, once;
    from long past (version 1), the view now marked skipped, then every change."""
    table_id = host.table_id
    playing = asyncio.create_task(play_seat(host, host_rounds=ROUNDS, log=SeatLog()))
    while store.version(table_id) < REPLAY_LIMIT * 2:
        await asyncio.sleep(0.05)
    near = store.version(table_id) - back
    recent, old = await asyncio.wait_for(
        asyncio.gather(until_over(watch(near)), until_over(watch(1))), GAME_SECONDS
    )
    await asyncio.wait_for(playing, GAME_SECONDS)
    truth = store.truth(table_id)
    check_watched(recent, truth, near)
    assert recent[0].version == near + 1 and not recent[0].snapshot
    check_watched(old, truth, 1)
    assert old[0].snapshot and old[0].skipped and old[0].version > REPLAY_LIMIT
    # Then the changes that follow, one by one (check_watched: consecutive, or a whole view
    # marked skipped where this reader fell more than the audience's lag behind, as a
    # loaded machine's test process does: the product's rule for a slow spectator).
    assert sum(not c.snapshot for c in old[1:]) > len(old[1:]) // 2
    assert old[0].version - 1 > len(old[:1]), "the states since version 1 not replayed"


@dataclass
class Watched:
    """What a spectator saw through restarts: every change, the reason each lost stream
    ended with ("" for none), and how many streams it opened."""

    seen: list[pb.WatchResponse] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)
    opened: int = 0


async def watch_through_restarts(
    stack: Stack, store: Store, nats: NatsServer, host: GatewayClient, watch: Watching
) -> Watched:
    """The host plays while the audience replica is stopped and started again, then NATS
    is; the spectator resumes from its last version after each lost stream, to the game's
    end. What it saw is checked: no gap, no duplicate, no leak, the game over."""
    table_id = host.table_id
    watched = Watched()
    over = asyncio.Event()

    async def watch_through() -> None:
        while not over.is_set():
            watched.opened += 1
            try:
                async for change in watch(watched.seen[-1].version if watched.seen else 1):
                    watched.seen.append(change)
                    if change.view.phase == "game_over":
                        over.set()
                        return
            except GatewayError as error:
                watched.ends.append(error.reason)
            await asyncio.sleep(0.2)

    async def play_to(version: int | None) -> None:  # bots wait for the host between
        def reached(view: object) -> bool:
            return version is not None and view.version >= version  # type: ignore[attr-defined]

        await asyncio.wait_for(play_seat(host, host_rounds=ROUNDS, until=reached), GAME_SECONDS)

    watching = asyncio.create_task(watch_through())
    start = store.version(table_id)
    await play_to(start + 20)
    await asyncio.to_thread(stack.stop_one, "audience")
    await asyncio.to_thread(stack.start_one, "audience")
    await play_to(start + 60)
    nats.stop()
    await asyncio.sleep(0.5)
    await asyncio.to_thread(nats.start)
    await play_to(None)
    await asyncio.wait_for(watching, 30)
    check_watched(watched.seen, store.truth(table_id), 1)
    assert watched.seen[-1].view.phase == "game_over"
    return watched
