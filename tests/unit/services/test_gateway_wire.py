"""The gateway's changes on the wire: each one the message built the ordinary way
(generated protobuf classes), every singular field once at every depth, and its
framing (Session, batched) exact, for every seat of a played table."""

from __future__ import annotations

from pathlib import Path

import pytest

from president.events.v1 import events_pb2 as epb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.seat_views import public_view, seat_view
from president.services.gateway.streams.fanout import messages
from president.services.gateway.streams.receipts import receipt
from president.services.gateway.streams.watch import (
    BATCHED_WATCH,
    SESSION,
    session_snapshot,
    snapshot,
)
from president.services.gateway.streams.wire import session_change
from president.services.gateway.streams.wire import session_snapshot as framed_snapshot
from tests.support.gateway_entries import game_entries, played_entries
from tests.support.wire_fields import fields_sent_twice


@pytest.mark.parametrize("size", [0, 1, 127, 128, 300, 16_383, 16_384, 70_000])
def test_a_framed_change_is_the_session_response_that_carries_it(size: int) -> None:
    change = pb.WatchResponse(version=7, event=epb.EventEnvelope(payload=b"x" * size))
    framed = session_change(change.SerializeToString())
    assert framed == pb.SessionResponse(changes=[change]).SerializeToString()
    assert list(pb.SessionResponse.FromString(framed).changes) == [change]


def test_each_change_is_the_message_built_whole_for_every_seat(tmp_path: Path) -> None:
    entries = played_entries(tmp_path)
    assert len(entries) > 10
    for entry in entries:
        seats: list[int | None] = [*range(len(entry.table.game.seats)), None]
        for seat in seats:
            built = pb.WatchResponse(version=entry.version, event=entry.event(seat))
            built.view.CopyFrom(seat_view(public_view(entry.table), entry.table, seat))
            built.view.MergeFrom(entry.countdown())
            receipt(built, entry.envelope)  # every change carries its event's chain hashes
            assert built.receipt_hash == entry.envelope.hash != ""
            sent = entry.watch_response(seat)
            assert fields_sent_twice(sent, pb.WatchResponse.DESCRIPTOR) == []
            (carried,) = pb.SessionResponse.FromString(entry.session_response(seat)).changes
            assert carried == built == pb.WatchResponse.FromString(sent)


def test_every_message_a_stream_sends_carries_each_field_once(tmp_path: Path) -> None:
    """Over a whole game (the exchange included), for every seat and spectators: a change
    alone, batched, on a Session, the snapshots, and several joined as one message."""
    entries = game_entries(tmp_path)
    watch, session = pb.WatchResponse.DESCRIPTOR, pb.SessionResponse.DESCRIPTOR
    result = pb.SessionResponse(results=[pb.CommandResult(command_id="c", version=3)])
    for seat in [0, 1, 2, 3, None]:
        for entry in entries:
            for sent in (
                entry.watch_response(seat),
                entry.skipped_view(seat),
                snapshot(entry, seat),
                entry.batched_watch_response(seat),
            ):
                assert fields_sent_twice(sent, watch) == [], (entry.version, seat)
            for sent in (entry.session_response(seat), session_snapshot(entry, seat)):
                assert fields_sent_twice(sent, session) == [], (entry.version, seat)
        for wire, descriptor in ((BATCHED_WATCH, watch), (SESSION, session)):
            versions: list[int] = []
            for joined in messages(wire, entries, lambda _table, seat=seat: seat):
                assert fields_sent_twice(joined, descriptor) == []
                parsed = descriptor._concrete_class.FromString(joined)
                versions += [change.version for change in parsed.changes]
            assert versions == [entry.version for entry in entries]
        together = entries[-1].session_response(seat) + result.SerializeToString()
        assert fields_sent_twice(together, session) == []


def test_a_field_sent_twice_is_found() -> None:
    """The check finds what protobufjs would get wrong: a view in two parts."""
    first = pb.WatchResponse(version=4)
    first.view.round.round_no = 1
    second = pb.WatchResponse()
    second.view.round.hand.append("3C")
    joined = first.SerializeToString() + second.SerializeToString()
    assert fields_sent_twice(joined, pb.WatchResponse.DESCRIPTOR) == ["view"]
    inner = pb.WatchResponse(view=first.view).SerializeToString()
    inner += pb.WatchResponse(view=second.view).SerializeToString()
    assert fields_sent_twice(inner, pb.WatchResponse.DESCRIPTOR) == ["view"]
    both = pb.SessionRequest(watch=pb.WatchRequest(table_id="t")).SerializeToString()
    both += pb.SessionRequest(play=pb.PlayRequest(cards=["3C"])).SerializeToString()
    assert fields_sent_twice(both, pb.SessionRequest.DESCRIPTOR) == ["request (play, watch)"]


def test_a_session_snapshot_is_the_snapshot_change(tmp_path: Path) -> None:
    entry = played_entries(tmp_path, moves=3)[-1]
    for seat in (0, 2, None):
        expected = pb.SessionResponse()
        expected.changes.add(version=entry.version, snapshot=True, view=entry.view(seat))
        expected.changes[0].view.server_now_unix_ms = 1_700_000_000_000
        framed = framed_snapshot(entry.version, entry.view(seat), 1_700_000_000_000)
        assert pb.SessionResponse.FromString(framed) == expected
