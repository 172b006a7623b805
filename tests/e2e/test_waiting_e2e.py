"""A table never stalls, through the gateway on SQLite and PostgreSQL: with short waiting times
(PRESIDENT_HOST_IDLE_SECONDS, PRESIDENT_EMPTY_TABLE_SECONDS), a host who does nothing between
rounds lets the table move on, and a table every person left closes, says so to its watchers
and takes no more commands."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest

from president.client import GatewayClient, play_seat
from president.servicekit.launcher import SERVICES, Stack
from tests.support.gateway_truth import Store, expect, table_of_humans
from tests.support.servers import store_databases
from tests.support.service_stack import service_stack

WAIT = {"PRESIDENT_HOST_IDLE_SECONDS": "1", "PRESIDENT_EMPTY_TABLE_SECONDS": "1"}
SECONDS = 60


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def waiting_stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, nats_url: str
) -> Iterator[Stack]:
    """The five services with one-second waiting times, on each store."""
    workdir = tmp_path_factory.mktemp("waiting")
    with (
        store_databases(request, workdir, "waiting") as (database, env),
        service_stack(workdir, database, nats_url, SERVICES, {**env, **WAIT}) as stack,
    ):
        yield stack


@pytest.fixture
async def client(waiting_stack: Stack) -> AsyncIterator[GatewayClient]:
    """A client of the stack's gateway; afterwards its table verifies."""
    made = GatewayClient.connect(waiting_stack.gateway)
    yield made
    await made.close()
    if made.table_id:
        store = Store(waiting_stack)
        try:
            store.verify([made.table_id])
        finally:
            store.close()


async def until_view(client: GatewayClient, wanted: str, seconds: float = 20) -> None:
    """Watch until a view is in the ``wanted`` phase (or the table closed, for "closed")."""

    async def watching() -> None:
        async for change in client.watch():
            view = change.view
            if view.phase == wanted or (wanted == "closed" and view.closed):
                return

    await asyncio.wait_for(watching(), seconds)


async def test_a_host_who_does_nothing_between_rounds_lets_the_table_move_on(
    client: GatewayClient,
) -> None:
    ann, bob = await table_of_humans(
        client, "classic", humans=2, seats=4, options={"game_end": "rounds:5"}
    )
    await ann.start()
    await asyncio.wait_for(
        asyncio.gather(
            *(
                play_seat(p, until=lambda view: view.round.round_no == 2, keep=False)
                for p in (ann, bob)
            )
        ),
        SECONDS,
    )  # nobody chose Next round: the table did, after the host's time
    view = await bob.get_table()
    assert view.game_no == 1 and view.round.round_no >= 2


async def test_an_unlimited_game_ends_and_goes_back_to_the_lobby_by_itself(
    client: GatewayClient, waiting_stack: Stack
) -> None:
    ann, bob = await table_of_humans(
        client, "house", humans=2, seats=4, options={"game_end": "unlimited"}
    )
    await ann.start()
    await asyncio.wait_for(
        asyncio.gather(
            *(
                play_seat(p, until=lambda view: view.phase == "between_rounds", keep=False)
                for p in (ann, bob)
            )
        ),
        SECONDS,
    )
    await until_view(bob, "lobby")  # the game ended, then the table went back to the lobby
    store = Store(waiting_stack)
    try:
        kinds = [event.type.rsplit(".", 1)[-1] for event in store.events(ann.table_id or "")]
        kinds = [kind for kind in kinds if kind != "SeatPresence"]  # streams closing meanwhile
    finally:
        store.close()
    assert "GameEnded" in kinds and kinds[-1] == "ReturnedToLobby"
    assert kinds.count("RoundEnded") == 1


async def test_a_table_every_person_left_closes_and_says_so(client: GatewayClient) -> None:
    created = await client.create_table(
        "classic", seat_count=4, visibility="public", display_name="Ann"
    )
    bob = client.sibling()
    await bob.join(created.table_id, "Bob")
    assert created.table_id in {t.table_id for t in await client.sibling().list_tables()}
    watcher = client.sibling()
    await watcher.spectate(created.table_id)
    closing = asyncio.ensure_future(until_view(watcher, "closed"))
    await client.leave()
    await bob.leave()
    await closing
    view = await watcher.get_table()
    assert view.closed
    assert created.table_id not in {t.table_id for t in await client.sibling().list_tables()}
    late = client.sibling()
    await expect(
        late.join(created.table_id, "Late"), grpc.StatusCode.FAILED_PRECONDITION, "TABLE_CLOSED"
    )
    await expect(bob.leave(), grpc.StatusCode.FAILED_PRECONDITION, "TABLE_CLOSED")
    assert (await watcher.get_table()).version == view.version  # nothing changed
