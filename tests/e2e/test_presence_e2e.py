"""Presence and early takeover, through the gateway on SQLite and PostgreSQL: a seat shows
connected while its person has a Session open and not after it closes; with
``takeover_seconds`` a disconnected seat's turn is played by the server that long after its
turn began (the stored times say so), and once its person is back the seat waits for them;
bad ``takeover_seconds`` values are refused with a sentence."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime, timedelta

import grpc
import pytest

from president import codec
from president.client import GatewayClient
from president.game.v1 import game_pb2 as gpb
from president.hosting import deadlines
from president.hosting.events import SeatPresence, TableCreated
from president.rules import round as rnd
from president.servicekit.launcher import SERVICES, Stack
from tests.support.gateway_truth import Store, expect, table_of_humans
from tests.support.servers import store_databases
from tests.support.service_stack import service_stack

SECONDS = 60
TURN = 20
TAKEOVER = 1


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def presence_stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, nats_url: str
) -> Iterator[Stack]:
    """The five services, on each store."""
    workdir = tmp_path_factory.mktemp("presence")
    with (
        store_databases(request, workdir, "presence") as (database, env),
        service_stack(workdir, database, nats_url, SERVICES, env) as stack,
    ):
        yield stack


@pytest.fixture
async def client(presence_stack: Stack) -> AsyncIterator[GatewayClient]:
    """A client of the stack's gateway; afterwards its table verifies (the audit's check of
    every timeout against the deadline rules included)."""
    made = GatewayClient.connect(presence_stack.gateway)
    yield made
    await made.close()
    if made.table_id:
        store = Store(presence_stack)
        try:
            store.verify([made.table_id])
        finally:
            store.close()


async def until_view(
    watcher: GatewayClient, wanted: Callable[[gpb.TableView], bool]
) -> gpb.TableView:
    """Watch until a view is as ``wanted``; that view."""

    async def watching() -> gpb.TableView:
        async for change in watcher.watch():
            if change.HasField("view") and wanted(change.view):
                return change.view
        raise AssertionError("the stream ended")

    return await asyncio.wait_for(watching(), SECONDS)


def connected(view: gpb.TableView, seat: int) -> bool:
    return view.seats[seat].connected


async def test_a_seat_is_connected_while_its_session_is_open(client: GatewayClient) -> None:
    ann, bob = await table_of_humans(client, "house", humans=2, seats=4)
    assert bob.seat is not None and ann.seat is not None
    watcher = client.sibling()
    await watcher.spectate(ann.table_id or "")
    view = await watcher.get_table()
    assert not any(seat.connected for seat in view.seats)  # nobody has a stream open yet
    async with bob.session():
        view = await until_view(watcher, lambda v: connected(v, bob.seat or 0))
        assert not connected(view, ann.seat)  # Ann has none; the spectator is no seat
        assert not any(view.seats[s].connected for s in range(len(view.seats)) if s > 1)
        async with bob.session():  # a second stream of the same seat
            pass
        # The second stream closed, the first is still open: still connected.
        assert connected(await bob.get_table(), bob.seat)
    await until_view(watcher, lambda v: not connected(v, bob.seat or 0))
    assert not connected(await ann.get_table(), bob.seat)


def _takeovers(store: Store, table_id: str, seat: int) -> list[tuple[str, timedelta]]:
    """Each timeout of ``seat``'s turn in the log: the kind of deadline that ran for it and
    how long after the turn began it was stored (from the stored event times)."""
    clock: deadlines.TableClock | None = None
    found: list[tuple[str, timedelta]] = []
    for stored in store.events(table_id):
        event = codec.decode(stored.type, stored.payload)
        at = datetime.fromisoformat(str(stored.metadata["time"]))
        if clock is None:
            assert isinstance(event, TableCreated)
            clock = deadlines.start_clock(event)
            continue
        if isinstance(event, rnd.TimedOut) and event.seat == seat:
            due = clock.deadline
            assert due is not None and clock.started_at is not None
            found.append((due.kind, at - clock.started_at))
        clock = deadlines.advance(clock, event, stored.version, at)
    return found


async def test_a_disconnected_seat_is_taken_over_and_its_person_takes_it_back(
    client: GatewayClient, presence_stack: Stack
) -> None:
    options = {"turn_seconds": str(TURN), "takeover_seconds": str(TAKEOVER)}
    ann, bob = await table_of_humans(client, "house", humans=2, seats=4, options=options)
    table_id = ann.table_id or ""
    bob_seat = bob.seat
    assert bob_seat is not None
    await ann.start()
    watcher = client.sibling()
    await watcher.spectate(table_id)
    # Nobody is connected: the server plays for Ann and Bob after takeover_seconds.
    store = Store(presence_stack)
    try:
        while not _takeovers(store, table_id, bob_seat):
            await asyncio.sleep(0.2)
        kind, after = _takeovers(store, table_id, bob_seat)[0]
        assert kind == deadlines.TAKEOVER
        assert timedelta(seconds=TAKEOVER) <= after < timedelta(seconds=TURN)
        # Bob comes back: when it is his turn again, the table waits for him.
        async with bob.session() as session:
            view = await until_view(
                watcher,
                lambda v: (
                    connected(v, bob_seat)
                    and v.phase == "round"
                    and v.round.phase == "play"
                    and v.round.HasField("to_act")
                    and v.round.to_act == bob_seat
                ),
            )
            taken = len(_takeovers(store, table_id, bob_seat))
            await asyncio.sleep(TAKEOVER * 3)  # well past the takeover time
            waiting = await bob.get_table()
            assert waiting.version == view.version  # nobody played for Bob
            assert len(_takeovers(store, table_id, bob_seat)) == taken
            assert waiting.round.legal  # and he plays himself
            move = waiting.round.legal[0]
            if move.verb == "pass":
                await session.pass_()
            else:
                await session.play(list(move.cards))
            assert (await bob.get_table()).version > view.version
    finally:
        store.close()


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"takeover_seconds": "30", "turn_seconds": "30"}, "shorter than turn_seconds"),
        ({"takeover_seconds": "40"}, "shorter than turn_seconds"),
        ({"takeover_seconds": "-1"}, "from 0 (off) to 3600"),
        ({"takeover_seconds": "soon"}, "whole number"),
    ],
)
async def test_bad_takeover_seconds_are_refused(
    client: GatewayClient, options: dict[str, str], words: str
) -> None:
    error = await expect(
        client.create_table("house", options=options, seat_count=4, display_name="Ann"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_OPTIONS",
    )
    assert words in error.message
    assert client.table_id is None or client.table_id == ""


def test_presence_is_a_stored_event_with_its_gateway() -> None:
    """The codec keeps a presence report as it was (it is stored, so the audit reads it)."""
    report = SeatPresence(seat=2, gateway="g1", connected=True)
    message = codec.encode(report)
    assert codec.from_message(message) == report
