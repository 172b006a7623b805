"""The audience of a table at one gateway: seats served at once, spectators a batch per loop
turn after them, in order; an audience replica's role and the calls it refuses.

The feeds run on a real TableHost and SQLite store, as in ``test_gateway_units``.
"""

from __future__ import annotations

import asyncio

import pytest

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.nats import Subjects
from president.services.gateway.audience import BATCH
from president.services.gateway.entries import Entry, Listener
from president.services.gateway.feed import FeedHub
from president.services.gateway.roles import PLAYERS_ONLY, gateway_role
from tests.unit.services import test_gateway_units as units

tables = units.tables


def _drain(listener: Listener) -> list[Entry]:
    out: list[Entry] = []
    while listener._entries:
        out.append(listener._entries.popleft())
    return out


async def test_seats_get_a_change_at_once_and_spectators_a_batch_per_loop_turn(
    tables: units.LocalTables,
) -> None:
    units.bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    start = feed.version
    seat, _, _ = feed.listen()
    crowd = [feed.listen(audience=True)[0] for _ in range(BATCH * 3 + 5)]
    units.play_human(tables, "t1", 1)
    await feed.catch_up()  # applied now: the seat has every change, no spectator yet
    versions = [entry.version for entry in _drain(seat)]
    assert versions == list(range(start + 1, feed.version + 1)) and len(versions) >= 1
    assert not any(listener._entries for listener in crowd)
    await asyncio.sleep(0)  # one loop turn: one batch
    assert 0 < sum(bool(listener._entries) for listener in crowd) <= BATCH
    for _ in range(200):
        await asyncio.sleep(0)
    for listener in crowd:  # in the end every spectator has every change, in order, once
        assert [entry.version for entry in _drain(listener)] == versions
    shared = {id(entry.watch_response(None)) for entry in feed.history if entry.version > start}
    assert len(shared) == len(versions), "one serialization per change for every spectator"
    for listener in crowd:
        feed.unlisten(listener)
    feed.unlisten(seat)
    assert not feed.watched
    await hub.close()


def test_an_audience_replica_refuses_only_calls_that_act_at_a_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    methods = set(pb.DESCRIPTOR.services_by_name["GatewayService"].methods_by_name)
    assert methods >= PLAYERS_ONLY
    assert {"Watch", "GetTable", "Spectate", "ListTables", "CreateGuest"} <= methods - PLAYERS_ONLY
    monkeypatch.delenv("PRESIDENT_GATEWAY_ROLE", raising=False)
    assert gateway_role() == "players"
    monkeypatch.setenv("PRESIDENT_GATEWAY_ROLE", "Audience")
    assert gateway_role() == "audience"
    monkeypatch.setenv("PRESIDENT_GATEWAY_ROLE", "spectators")
    with pytest.raises(SystemExit, match="players or audience"):
        gateway_role()
