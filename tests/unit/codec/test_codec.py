"""Every engine event survives the trip through protobuf bytes unchanged."""

from __future__ import annotations

import pytest

from president import codec
from president.events.v1 import events_pb2 as pb
from president.hosting import events as ev
from president.play.offline import play_game
from president.rules import game as g
from president.rules.options import PRESETS, options_for


@pytest.mark.parametrize("preset", PRESETS)
def test_a_whole_games_events_round_trip(preset: str) -> None:
    events: list[g.GameEvent] = []
    options = options_for(preset, {"jokers": True} if preset == "traditional" else {})
    play_game(
        options,
        5 if preset != "classic" else 4,
        seed=21,
        rounds=3,
        listener=lambda event, _table: events.append(event),
    )
    kinds = set()
    for event in events:
        message = codec.encode(event)
        data = message.SerializeToString(deterministic=True)
        back = codec.decode(codec.type_name(message), data)
        assert back == event
        kinds.add(type(event).__name__)
    assert {"RoundStarted", "CardsPlayed", "Passed", "TrickClosed", "RoundEnded"} <= kinds


def test_every_engine_event_type_has_a_message_of_its_name() -> None:
    engine_events = [
        "RoundStarted",
        "CardsGiven",
        "PlayStarted",
        "CardsPlayed",
        "Passed",
        "TrickClosed",
        "RevolutionChanged",
        "PlayerWentOut",
        "RoundEnded",
        "TimedOut",
        "SeatTaken",
        "SeatLeft",
        "SeatFreed",
        "GameStarted",
        "NextRoundStarted",
        "SeatsChanged",
        "GameEnded",
        "GameInterrupted",
        "ReturnedToLobby",
    ]
    for name in engine_events:
        assert codec.message_type(f"president.events.v1.{name}").__name__ == name


def test_seats_of_nobody_are_absent_not_zero() -> None:
    from president.rules import round as rnd

    message = codec.encode(rnd.PlayStarted(rnd.NOBODY))
    assert not message.HasField("leader")
    assert codec.from_message(message) == rnd.PlayStarted(rnd.NOBODY)
    assert codec.from_message(codec.encode(rnd.PlayStarted(0))) == rnd.PlayStarted(0)


def test_options_round_trip_as_text() -> None:
    for preset in PRESETS:
        options = options_for(preset, {"exchange": [1], "revolution": True})
        assert codec.options_from_map(preset, codec.options_to_map(options)) == options


def test_service_events_decode_as_domain_events_and_unknown_types_are_refused() -> None:
    revealed = pb.DealRevealed(game_no=1, round_no=2, secret_hex="00" * 32)
    payload = revealed.SerializeToString()
    event = codec.decode(codec.type_name(revealed), payload)
    assert event == ev.DealRevealed(game_no=1, round_no=2, secret_hex="00" * 32)
    assert codec.encode(event).SerializeToString(deterministic=True) == payload
    with pytest.raises(codec.NotAnEvent, match="Hand is not an event"):
        codec.decode(codec.type_name(pb.Hand), pb.Hand(seat=1).SerializeToString())
    with pytest.raises(ValueError, match="unknown event type"):
        codec.decode("president.events.v1.Nope", b"")
