"""Every message the gateway streams decodes the same in Python's protobuf and in the
protobufjs that ``@grpc/proto-loader`` installs.

``tests/clients/node/roundtrip.mjs`` decodes each message with the method's
``responseDeserialize`` (what ``@grpc/grpc-js`` calls on each message it
receives) and encodes the object back; Python parses both. A field the
gateway sent twice reaches protobufjs as its last part only, and comes back
short of the rest.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from google.protobuf.message import Message

from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.seat_views import public_view, seat_part
from president.services.gateway.streams.watch import (
    BATCHED_WATCH,
    SESSION,
    messages,
    session_snapshot,
)
from president.services.gateway.streams.watch import snapshot as watch_snapshot
from tests.support.gateway_entries import game_entries
from tests.support.node_client import PROTOS, run_node

TYPES = {"Watch": pb.WatchResponse, "Session": pb.SessionResponse}


def through_protobufjs(sent: list[tuple[str, bytes]]) -> list[bytes]:
    """Each (method, serialized response) as protobufjs decodes it, encoded back."""
    lines = "".join(
        json.dumps({"method": method, "data": base64.b64encode(data).decode()}) + "\n"
        for method, data in sent
    )
    done = run_node("roundtrip.mjs", str(PROTOS), input=lines)
    assert done.returncode == 0, done.stderr
    back = [base64.b64decode(json.loads(line)["data"]) for line in done.stdout.splitlines()]
    assert len(back) == len(sent)
    return back


def test_every_streamed_message_decodes_the_same_in_protobufjs(
    node_client: Path, tmp_path: Path
) -> None:
    entries = game_entries(tmp_path)
    sent: list[tuple[str, bytes]] = []
    result = pb.SessionResponse(results=[pb.CommandResult(command_id="c", version=9)])
    for seat in [0, 1, 2, 3, None]:
        for entry in entries:
            sent += [
                ("Watch", entry.watch_response(seat)),
                ("Watch", entry.skipped_view(seat)),
                ("Watch", watch_snapshot(entry, seat)),
                ("Session", entry.session_response(seat) + result.SerializeToString()),
                ("Session", session_snapshot(entry, seat)),
            ]
        for wire, method in ((BATCHED_WATCH, "Watch"), (SESSION, "Session")):
            joined = messages(wire, entries[-40:], lambda _table, seat=seat: seat)
            sent += [(method, message) for message in joined]
    decoded = through_protobufjs(sent)
    mismatched = []
    for (method, data), back in zip(sent, decoded, strict=True):
        ours: Message = TYPES[method].FromString(data)
        theirs: Message = TYPES[method].FromString(back)
        if ours != theirs:
            mismatched.append((method, len(data), len(back)))
    assert mismatched == [], f"{len(mismatched)} of {len(sent)} messages decode otherwise"
    # The messages were whole views (a broken check would pass on empty ones).
    views = [pb.WatchResponse.FromString(data).view for method, data in sent if method == "Watch"]
    assert all(len(view.seats) == 4 and view.version > 0 for view in views[:100])


def test_protobufjs_keeps_only_the_last_part_of_a_field_sent_twice(
    node_client: Path, tmp_path: Path
) -> None:
    """Why each field must come once: a view sent as a public part then the seat's part
    (as the gateway once did) is a whole view to Python and half a view to protobufjs."""
    entry = next(  # a play of the first round, seat 0 holding cards
        entry
        for entry in game_entries(tmp_path)
        if entry.envelope.type.endswith(".CardsPlayed")
        and entry.table.game.round is not None
        and entry.table.game.round.hands[0]
    )
    public = pb.WatchResponse(version=entry.version, view=public_view(entry.table))
    own = pb.WatchResponse(view=seat_part(entry.table, 0))
    joined = public.SerializeToString() + own.SerializeToString()
    ours = pb.WatchResponse.FromString(joined)
    assert len(ours.view.seats) == 4 and ours.view.round.hand
    (back,) = through_protobufjs([("Watch", joined)])
    theirs = pb.WatchResponse.FromString(back)
    assert theirs != ours
    assert len(theirs.view.seats) == 0 and theirs.view.version == 0 and theirs.view.round.hand
