"""The generated protobuf package is current and importable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from president.events.v1 import events_pb2

ROOT = Path(__file__).resolve().parents[3]


def test_the_checked_in_generated_code_matches_the_protos() -> None:
    check = subprocess.run(
        [sys.executable, str(ROOT / "protos" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stderr


def test_event_messages_round_trip_through_bytes() -> None:
    committed = events_pb2.DealCommitted(
        round_no=1,
        fingerprint="ab" * 32,
        deal_version="president-deal-v1",
        deal_order=[2, 3, 0, 1],
        players=4,
        options={"pass_rule": "reenter"},
    )
    dealt = events_pb2.RoundStarted(
        round_no=1, hands=[events_pb2.Hand(seat=0, cards=["3C", "10H"])], set_aside=["RJ"]
    )
    for message in (committed, dealt, events_pb2.ReturnedToLobby()):
        data = message.SerializeToString(deterministic=True)
        assert type(message).FromString(data) == message


def test_optional_fields_tell_absent_from_zero() -> None:
    opened_by_anyone = events_pb2.PlayStarted()
    led_by_seat_zero = events_pb2.PlayStarted(leader=0)

    assert not opened_by_anyone.HasField("leader")
    assert led_by_seat_zero.HasField("leader")
    assert opened_by_anyone.SerializeToString() != led_by_seat_zero.SerializeToString()


def test_every_message_is_in_the_events_package() -> None:
    names = set(events_pb2.DESCRIPTOR.message_types_by_name)
    assert {
        "TableCreated",
        "SeatTaken",
        "SeatLeft",
        "SeatFreed",
        "GameStarted",
        "DealCommitted",
        "RoundStarted",
        "CardsGiven",
        "PlayStarted",
        "CardsPlayed",
        "Passed",
        "TrickClosed",
        "RevolutionChanged",
        "PlayerWentOut",
        "RoundEnded",
        "DealRevealed",
        "TimedOut",
        "GameEnded",
        "GameInterrupted",
        "ReturnedToLobby",
    } <= names
    assert events_pb2.DESCRIPTOR.package == "president.events.v1"
