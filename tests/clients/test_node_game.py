"""A whole game through the real gateway by a Node client built the usual way.

``tests/clients/node/play.mjs`` uses ``@grpc/grpc-js`` and ``@grpc/proto-loader``
(protobufjs) on ``protos/``, as their READMEs show: two guests and two bots, the
first guest on Watch with a call per action, the second on one Session stream,
each playing legal moves read from its own view until the game is over. A
change whose field came twice on the wire reaches protobufjs as its last part
only (no seats, version 0): the client could not play, and this test fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from president.client import GatewayClient
from president.servicekit.launcher import Stack
from tests.support.gateway_truth import Store
from tests.support.node_client import PROTOS, run_node

SEATS = 4


@pytest.mark.slow
async def test_a_node_grpc_client_plays_a_whole_game(
    node_client: Path, sqlite_stack: Stack
) -> None:
    done = run_node("play.mjs", str(PROTOS), sqlite_stack.gateway, "classic", "rounds:2")
    assert done.stdout.strip(), done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    broken = [guest["broken"] for guest in report["guests"] if guest["broken"]]
    assert not broken, f"the Node client received half a view: {broken}"
    assert done.returncode == 0, (done.returncode, report, done.stderr[-2000:])
    assert report["final_phase"] == "game_over"
    for guest in report["guests"]:
        versions = [version for version, _seats, _phase in guest["changes"]]
        # Every change has the whole view, and a seat's stream misses none of them.
        assert {seats for _version, seats, _phase in guest["changes"]} == {SEATS}
        assert versions == list(range(versions[0], versions[-1] + 1)), guest["name"]
        phases = {phase for _version, _seats, phase in guest["changes"]}
        assert {"round", "between_rounds", "game_over"} <= phases
        assert guest["over"] and versions[-1] <= report["final_version"]
        assert guest["actions"] >= 5, guest
        # A view the table moved on from may be refused STALE now and then; a client
        # that saw half views would be refused on every move.
        assert sum(guest["refused"].values()) <= guest["actions"], guest
    # The game as the Python client and the auditor see it.
    async with GatewayClient.connect(sqlite_stack.gateway) as watcher:
        await watcher.spectate(report["table_id"])
        view = await watcher.get_table()
    assert view.phase == "game_over" and len(view.seats) == SEATS
    assert view.version >= max(g["changes"][-1][0] for g in report["guests"])
    store = Store(sqlite_stack)
    try:
        store.verify([report["table_id"]])
    finally:
        store.close()
