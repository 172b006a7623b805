"""A table's events to protobuf messages and back: the one translation of the log.

Every event of a table's stream, the engine's and the table service's own
(:mod:`president.hosting.events`), has a message of the same name in
``president.events.v1``. ``encode`` makes the message of an event;
``decode`` turns a stored event back into its event, and nothing else: a
stored type that is no event is :class:`NotAnEvent`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from google.protobuf.message import Message

from president.events.v1 import events_pb2 as pb
from president.hosting import events as ev
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import mask_of, names
from president.rules.options import Options, options_for

_PACKAGE = pb.DESCRIPTOR.package


def options_to_map(options: Options) -> dict[str, str]:
    """Every option by name as text, the form ``options_for`` reads back."""
    out: dict[str, str] = {}
    for name, value in options.to_dict().items():
        if name == "preset":
            continue
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, list | tuple):
            out[name] = ",".join(str(item) for item in value)
        else:
            out[name] = str(value)
    return out


def option_texts(options: Options) -> ev.OptionTexts:
    """Every option by name as text, sorted by name: the options of a service event."""
    return _sorted_texts(options_to_map(options))


def options_from_map(preset: str, values: Mapping[str, str]) -> Options:
    """The options a map of ``options_to_map`` describes (OptionError if they are none).

    Every round's events carry their table's options; parsed once per distinct
    map (``Options`` are frozen, so one value serves every event that names them).
    """
    return _parsed_options(preset, tuple(sorted(values.items())))


@lru_cache(maxsize=256)
def _parsed_options(preset: str, items: tuple[tuple[str, str], ...]) -> Options:
    return options_for(preset, dict(items))


def _seat(value: int) -> dict[str, int]:
    """An optional seat field: absent for -1 (nobody)."""
    return {} if value < 0 else {"value": value}


def _opt(message: Any, field: str) -> int:
    return int(getattr(message, field)) if message.HasField(field) else rnd.NOBODY


class NotAnEvent(ValueError):
    """A stored type names a message that is not an event of a table's stream."""


def encode(event: ev.TableEvent) -> Message:
    """The protobuf message of an event (engine events first: they are most of a log)."""
    if isinstance(event, rnd.RoundStarted):
        message = pb.RoundStarted(
            round_no=event.round_no,
            preset=event.options.preset,
            options=options_to_map(event.options),
            players=event.players,
            hands=[pb.Hand(seat=seat, cards=names(hand)) for seat, hand in enumerate(event.hands)],
            set_aside=names(event.set_aside),
            previous_standings=event.previous_standings,
            scores=event.scores,
            must_include=names(event.must_include),
        )
        if event.leader >= 0:
            message.leader = event.leader
        return message
    if isinstance(event, rnd.CardsGiven):
        return pb.CardsGiven(
            giver=event.giver,
            receiver=event.receiver,
            cards=names(event.cards),
            automatic=event.automatic,
        )
    if isinstance(event, rnd.PlayStarted):
        started = pb.PlayStarted()
        if event.leader >= 0:
            started.leader = event.leader
        return started
    if isinstance(event, rnd.CardsPlayed):
        played = pb.CardsPlayed(
            seat=event.seat,
            cards=names(event.cards),
            trick_version=event.trick_version,
            skipped=event.skipped,
            same_or_nothing=event.same_or_nothing,
        )
        if event.next_to_act >= 0:
            played.next_to_act = event.next_to_act
        return played
    if isinstance(event, rnd.Passed):
        passed = pb.Passed(seat=event.seat, skipped=event.skipped)
        if event.next_to_act >= 0:
            passed.next_to_act = event.next_to_act
        return passed
    if isinstance(event, rnd.TrickClosed):
        closed = pb.TrickClosed(trick_version=event.trick_version, winner=event.winner)
        if event.leader >= 0:
            closed.leader = event.leader
        return closed
    if isinstance(event, rnd.RevolutionChanged):
        return pb.RevolutionChanged(active=event.active)
    if isinstance(event, rnd.PlayerWentOut):
        return pb.PlayerWentOut(seat=event.seat, penalised=event.penalised)
    if isinstance(event, rnd.RoundEnded):
        return pb.RoundEnded(
            standings=event.standings,
            points=event.points,
            totals=event.totals,
            game_over=event.game_over,
            winners=event.winners,
        )
    if isinstance(event, rnd.TimedOut):
        timed_out = pb.TimedOut()
        if event.seat >= 0:
            timed_out.seat = event.seat
        return timed_out
    if isinstance(event, g.SeatTaken):
        return pb.SeatTaken(
            seat=event.seat,
            player_id=event.player,
            is_bot=event.is_bot,
            display_name=event.display_name,
        )
    if isinstance(event, g.SeatLeft):
        return pb.SeatLeft(seat=event.seat, player_id=event.player, removed=event.removed)
    if isinstance(event, g.SeatFreed):
        return pb.SeatFreed(seat=event.seat)
    if isinstance(event, g.GameStarted):
        return pb.GameStarted(game_no=event.game_no, players=event.players)
    if isinstance(event, g.NextRoundStarted):
        return pb.NextRoundStarted()
    if isinstance(event, g.SeatsChanged):
        return pb.SeatsChanged(moved_from=event.moved_from)
    if isinstance(event, g.GameEnded):
        return pb.GameEnded(winners=event.winners, stopped=event.stopped)
    if isinstance(event, g.GameInterrupted):
        return pb.GameInterrupted(reason=event.reason)
    if isinstance(event, g.ReturnedToLobby):
        return pb.ReturnedToLobby()
    return _encode_service_event(event)


def _encode_service_event(event: ev.ServiceEvent) -> Message:
    """The protobuf message of one of the table service's own events."""
    if isinstance(event, ev.DealCommitted):
        return pb.DealCommitted(
            game_no=event.game_no,
            round_no=event.round_no,
            fingerprint=event.fingerprint,
            deal_version=event.deal_version,
            deal_order=event.deal_order,
            players=event.players,
            options=dict(event.options),
            jokers=event.jokers,
            hand_size=event.hand_size,
        )
    if isinstance(event, ev.DealRevealed):
        return pb.DealRevealed(
            game_no=event.game_no, round_no=event.round_no, secret_hex=event.secret_hex
        )
    if isinstance(event, ev.DealSecretLost):
        return pb.DealSecretLost(
            game_no=event.game_no, round_no=event.round_no, fingerprint=event.fingerprint
        )
    if isinstance(event, ev.ReactionShown):
        return pb.ReactionShown(seat=event.seat, reaction=event.reaction)
    if isinstance(event, ev.ChatPosted):
        return pb.ChatPosted(seat=event.seat, text=event.text)
    if isinstance(event, ev.SeatMuted):
        return pb.SeatMuted(seat=event.seat, player_id=event.player_id, muted=event.muted)
    if isinstance(event, ev.TableClosed):
        return pb.TableClosed(reason=event.reason)
    if isinstance(event, ev.SeatPresence):
        return pb.SeatPresence(seat=event.seat, gateway=event.gateway, connected=event.connected)
    if isinstance(event, ev.HostChanged):
        return pb.HostChanged(
            player_id=event.player_id,
            previous_player_id=event.previous_player_id,
            automatic=event.automatic,
        )
    if isinstance(event, ev.TableCreated):
        return pb.TableCreated(
            table_id=event.table_id,
            preset=event.preset,
            options=dict(event.options),
            host_player_id=event.host_player_id,
            visibility=event.visibility,
            seat_count=event.seat_count,
            name=event.name,
        )
    raise TypeError(f"no message for {event!r}")


def from_message(message: Message) -> ev.TableEvent:
    """The event of a message (engine events first); :class:`NotAnEvent` for no event.

    The generated classes have no subclasses: ``type(message) is`` says what
    ``isinstance`` does, many times faster (the audit decodes every event).
    """
    if type(message) is pb.RoundStarted:
        options = options_from_map(message.preset, message.options)
        seat_count = len(message.hands)
        hands = [0] * seat_count
        for hand in message.hands:
            hands[hand.seat] = mask_of(list(hand.cards))
        return rnd.RoundStarted(
            options=options,
            round_no=message.round_no,
            players=tuple(message.players),
            hands=tuple(hands),
            set_aside=mask_of(list(message.set_aside)),
            previous_standings=tuple(message.previous_standings),
            scores=tuple(message.scores),
            leader=_opt(message, "leader"),
            must_include=mask_of(list(message.must_include)),
        )
    if type(message) is pb.CardsGiven:
        return rnd.CardsGiven(
            message.giver, message.receiver, mask_of(list(message.cards)), message.automatic
        )
    if type(message) is pb.PlayStarted:
        return rnd.PlayStarted(_opt(message, "leader"))
    if type(message) is pb.CardsPlayed:
        return rnd.CardsPlayed(
            message.seat,
            mask_of(list(message.cards)),
            message.trick_version,
            _opt(message, "next_to_act"),
            tuple(message.skipped),
            message.same_or_nothing,
        )
    if type(message) is pb.Passed:
        return rnd.Passed(message.seat, _opt(message, "next_to_act"), tuple(message.skipped))
    if type(message) is pb.TrickClosed:
        return rnd.TrickClosed(message.trick_version, message.winner, _opt(message, "leader"))
    if type(message) is pb.RevolutionChanged:
        return rnd.RevolutionChanged(message.active)
    if type(message) is pb.PlayerWentOut:
        return rnd.PlayerWentOut(message.seat, message.penalised)
    if type(message) is pb.RoundEnded:
        return rnd.RoundEnded(
            tuple(message.standings),
            tuple(message.points),
            tuple(message.totals),
            message.game_over,
            tuple(message.winners),
        )
    if type(message) is pb.TimedOut:
        return rnd.TimedOut(_opt(message, "seat"))
    if type(message) is pb.SeatTaken:
        return g.SeatTaken(message.seat, message.player_id, message.is_bot, message.display_name)
    if type(message) is pb.SeatLeft:
        return g.SeatLeft(message.seat, message.player_id, message.removed)
    if type(message) is pb.SeatFreed:
        return g.SeatFreed(message.seat)
    if type(message) is pb.GameStarted:
        return g.GameStarted(message.game_no, tuple(message.players))
    if type(message) is pb.NextRoundStarted:
        return g.NextRoundStarted()
    if type(message) is pb.SeatsChanged:
        return g.SeatsChanged(tuple(message.moved_from))
    if type(message) is pb.GameEnded:
        return g.GameEnded(tuple(message.winners), message.stopped)
    if type(message) is pb.GameInterrupted:
        return g.GameInterrupted(message.reason)
    if type(message) is pb.ReturnedToLobby:
        return g.ReturnedToLobby()
    return _service_event(message)


def _sorted_texts(values: Mapping[str, str]) -> ev.OptionTexts:
    return tuple(sorted(values.items()))


def _service_event(message: Message) -> ev.ServiceEvent:
    """The table service's own event of a message; :class:`NotAnEvent` for no event."""
    if type(message) is pb.DealCommitted:
        return ev.DealCommitted(
            message.game_no,
            message.round_no,
            message.fingerprint,
            message.deal_version,
            tuple(message.deal_order),
            message.players,
            _sorted_texts(message.options),
            message.jokers,
            message.hand_size,
        )
    if type(message) is pb.DealRevealed:
        return ev.DealRevealed(message.game_no, message.round_no, message.secret_hex)
    if type(message) is pb.DealSecretLost:
        return ev.DealSecretLost(message.game_no, message.round_no, message.fingerprint)
    if type(message) is pb.ReactionShown:
        return ev.ReactionShown(message.seat, message.reaction)
    if type(message) is pb.ChatPosted:
        return ev.ChatPosted(message.seat, message.text)
    if type(message) is pb.SeatMuted:
        return ev.SeatMuted(message.seat, message.player_id, message.muted)
    if type(message) is pb.TableClosed:
        return ev.TableClosed(message.reason)
    if type(message) is pb.SeatPresence:
        return ev.SeatPresence(message.seat, message.gateway, message.connected)
    if type(message) is pb.HostChanged:
        return ev.HostChanged(message.player_id, message.previous_player_id, message.automatic)
    if type(message) is pb.TableCreated:
        return ev.TableCreated(
            message.table_id,
            message.preset,
            _sorted_texts(message.options),
            message.host_player_id,
            message.visibility,
            message.seat_count,
            message.name,
        )
    raise NotAnEvent(f"{type_name(message)} is not an event of a table's stream")


_MESSAGE_TYPES: dict[str, type[Message]] = {
    f"{_PACKAGE}.{name}": getattr(pb, name) for name in pb.DESCRIPTOR.message_types_by_name
}


def message_type(type_name: str) -> type[Message]:
    """The message class of a stored event's type name."""
    try:
        return _MESSAGE_TYPES[type_name]
    except KeyError:
        raise ValueError(f"unknown event type {type_name!r}") from None


def parse(type_name: str, payload: bytes) -> Message:
    """The message of a stored event's type name and payload bytes."""
    return message_type(type_name).FromString(payload)


def decode(type_name: str, payload: bytes) -> ev.TableEvent:
    """A stored event as its event (ValueError: not an event's type, or unreadable bytes)."""
    return from_message(parse(type_name, payload))


def type_name(message: Message | type[Message]) -> str:
    """The full name stored as an event's type, of a message or a message class."""
    return str(message.DESCRIPTOR.full_name)
