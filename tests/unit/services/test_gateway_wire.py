"""The gateway's wire framing round-trips: bytes joined by hand parse back as the messages
built the ordinary way (generated protobuf classes), for every seat of a played table."""

from __future__ import annotations

from pathlib import Path

import pytest

from president.events.v1 import events_pb2 as epb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.dealer import LocalDealer
from president.hosting.host import TableHost
from president.hosting.seat_views import public_view, seat_part, seat_view
from president.hosting.streams import stream_id
from president.rules import bots
from president.rules import game as g
from president.rules.options import options_for
from president.servicekit.nats import envelope
from president.services.gateway.entries import Entry, apply, with_clock
from president.services.gateway.receipts import receipt
from president.services.gateway.wire import (
    public_change,
    session_change,
    session_snapshot,
    view_part,
)
from president.store import EventStore


def played_entries(tmp_path: Path, moves: int = 12) -> list[Entry]:
    """The entries of a four-seat table (a human in seat 0, bots elsewhere) after a few plays."""
    store = EventStore.from_url(f"sqlite:///{tmp_path / 'events.db'}", migrate=True)
    host = TableHost(store, LocalDealer())
    host.create("w1", options_for("house"), seat_count=4, host_player_id="p0")
    host.decide_and_append("w1", g.SitDown(0, "p0", False, "Ada"), "sit-0", "p0")
    for seat in range(1, 4):
        host.decide_and_append("w1", g.SitDown(seat, f"bot-{seat}", True), f"sit-{seat}", "p0")
    host.decide_and_append("w1", g.StartGame(), "start", "p0")
    for step in range(moves):
        table = host.load("w1")
        state = table.game.round
        if state is None or table.game.phase != g.GamePhase.ROUND:
            break
        command = bots.choose_action(state, 0)
        if command is None:
            break
        host.decide_and_append("w1", command, f"move-{step}", "p0")
    entries: list[Entry] = []
    for stored in store.read_stream(stream_id("w1"), 1):
        previous = entries[-1] if entries else None
        entry = apply(previous.table if previous else None, envelope(stored))
        entries.append(with_clock(entry, previous))
    return entries


@pytest.mark.parametrize("size", [0, 1, 127, 128, 300, 16_383, 16_384, 70_000])
def test_a_framed_change_is_the_session_response_that_carries_it(size: int) -> None:
    change = pb.WatchResponse(version=7, event=epb.EventEnvelope(payload=b"x" * size))
    framed = session_change(change.SerializeToString())
    assert framed == pb.SessionResponse(changes=[change]).SerializeToString()
    assert list(pb.SessionResponse.FromString(framed).changes) == [change]


def test_joined_parts_parse_as_the_built_changes_for_every_seat(tmp_path: Path) -> None:
    entries = played_entries(tmp_path)
    assert len(entries) > 10
    for entry in entries:
        seats: list[int | None] = [*range(len(entry.table.game.seats)), None]
        for seat in seats:
            built = pb.WatchResponse(version=entry.version, event=entry.event(seat))
            built.view.CopyFrom(seat_view(public_view(entry.table), entry.table, seat))
            built.view.MergeFrom(entry.countdown())
            own = pb.WatchResponse(event=entry.event(seat), view=entry.countdown())
            own = own.SerializeToString()
            joined = public_change(entry.version, entry.table) + view_part(entry.table, seat)
            assert pb.WatchResponse.FromString(joined + own) == built
            receipt(built, entry.envelope)  # every change carries its event's chain hashes
            assert built.receipt_hash == entry.envelope.hash != ""
            receipted = receipt(pb.WatchResponse(), entry.envelope).SerializeToString()
            assert pb.WatchResponse.FromString(joined + own + receipted) == built
            (carried,) = pb.SessionResponse.FromString(entry.session_response(seat)).changes
            assert carried == built == pb.WatchResponse.FromString(entry.watch_response(seat))
            if seat is not None:
                assert view_part(entry.table, seat) == (
                    pb.WatchResponse(view=seat_part(entry.table, seat)).SerializeToString()
                )


def test_a_session_snapshot_is_the_snapshot_change(tmp_path: Path) -> None:
    entry = played_entries(tmp_path, moves=3)[-1]
    for seat in (0, 2, None):
        expected = pb.SessionResponse()
        expected.changes.add(version=entry.version, snapshot=True, view=entry.view(seat))
        expected.changes[0].view.server_now_unix_ms = 1_700_000_000_000
        framed = session_snapshot(entry.version, entry.view(seat), 1_700_000_000_000)
        assert pb.SessionResponse.FromString(framed) == expected
