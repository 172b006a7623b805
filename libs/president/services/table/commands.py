"""``president.game.v1.Command`` to the table's commands, and what right each needs.

Cards arrive as text, read by the one parser of a client's cards
(:func:`president.servicekit.checks.cards`: MALFORMED_CARDS for a text that names
no card or more than five of them); the same card twice is ``NOT_IN_HAND``. A
seat command that names no seat acts for the seat its actor holds at that
moment: :mod:`president.services.table.rights` finds it on the very table the
command is decided on, and decides who may send each command.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from president.game.v1 import game_pb2 as gpb
from president.hosting.commands import (
    Chat,
    HandOverHost,
    MoveOn,
    MuteSeat,
    React,
    SetPresence,
    TableCommand,
)
from president.rules import game as g
from president.rules import round as rnd
from president.rules.button import named_twice
from president.rules.cards import to_mask
from president.servicekit.checks import bot_player, cards, chat_text, invalid, reaction
from president.servicekit.names import display_name

MAX_PLAYER_ID = 64
MAX_SEAT = 64
MAX_GATEWAY_ID = 64

__all__ = [
    "Chat",
    "HandOverHost",
    "MoveOn",
    "MuteSeat",
    "React",
    "SetPresence",
    "TableCommand",
    "Translated",
    "card_mask",
    "translate",
]


@dataclass(frozen=True)
class Translated:
    """A table command with what the service needs to know about it."""

    #: The command; for one that names no seat, as made for seat 0 (see ``for_seat``).
    command: TableCommand
    #: The seat the command acts for, if it is a seat command that names one.
    seat: int | None = None
    #: Leave by the host: removes another player.
    removal: bool = False
    #: Only the table's host of the moment may send it.
    host_only: bool = False
    #: A seat command that names no seat: the command for the seat its actor holds.
    for_seat: Callable[[int], TableCommand] | None = None


def card_mask(texts: Sequence[str]) -> int:
    """The mask of card texts; MALFORMED_CARDS, or NOT_IN_HAND for a card written twice."""
    named = cards(texts)
    twice = named_twice(named)
    if twice is not None:
        raise twice
    return to_mask(named)


def _seat_command(
    sent: gpb.PlayCards
    | gpb.Pass
    | gpb.ReturnCards
    | gpb.React
    | gpb.Chat
    | gpb.SetPresence
    | gpb.Leave,
    make: Callable[[int], TableCommand],
) -> Translated:
    """A seat command: for the seat it names, or (none named) for its actor's."""
    if sent.HasField("seat"):
        seat = _seat(sent.seat)
        return Translated(make(seat), seat=seat)
    return Translated(make(0), for_seat=make)


def _seat(value: int) -> int:
    if not 0 <= value < MAX_SEAT:
        raise invalid("NO_SUCH_SEAT", f"seat {value} is not a seat of any table")
    return value


def translate(command: gpb.Command) -> Translated:
    """The table command of a protobuf command; ServiceError or Rejected for bad input."""
    kind = command.WhichOneof("kind")
    if kind == "play_cards":
        play = command.play_cards
        version = play.trick_version if play.HasField("trick_version") else None
        mask = card_mask(play.cards)
        return _seat_command(play, lambda seat: rnd.PlayCards(seat, mask, version))
    if kind == "pass":
        passing = getattr(command, "pass")
        trick = passing.trick_version if passing.HasField("trick_version") else None
        return _seat_command(passing, lambda seat: rnd.Pass(seat, trick))
    if kind == "return_cards":
        returned = command.return_cards
        returning = card_mask(returned.cards)
        return _seat_command(returned, lambda seat: rnd.ReturnCards(seat, returning))
    if kind == "react":
        code = reaction(command.react.reaction)
        return _seat_command(command.react, lambda seat: React(seat, code))
    if kind == "chat":
        text = chat_text(command.chat.text)
        return _seat_command(command.chat, lambda seat: Chat(seat, text))
    if kind == "mute_seat":
        muting = command.mute_seat
        return Translated(MuteSeat(_seat(muting.seat), muting.muted), host_only=True)
    if kind == "set_presence":
        presence = command.set_presence
        if not 0 < len(presence.gateway) <= MAX_GATEWAY_ID:
            raise invalid(
                "INVALID_GATEWAY",
                f"a presence report names its gateway replica in 1 to {MAX_GATEWAY_ID} characters",
            )
        connected, gateway = presence.connected, presence.gateway
        return _seat_command(presence, lambda seat: SetPresence(seat, connected, gateway))
    if kind == "leave":
        if command.leave.removed:
            seat = _seat(command.leave.seat)
            return Translated(g.Leave(seat, True), removal=True)
        return _seat_command(command.leave, lambda seat: g.Leave(seat, False))
    if kind == "hand_over_host":
        seat = _seat(command.hand_over_host.seat)
        return Translated(HandOverHost(seat), host_only=True)
    if kind == "move_on":
        moving = command.move_on
        return Translated(MoveOn(moving.kind, moving.game_no, moving.round_no, moving.timer_key))
    if kind == "sit_down":
        sit = command.sit_down
        if len(sit.player_id) > MAX_PLAYER_ID:
            raise invalid("INVALID_PLAYER", f"a player id has at most {MAX_PLAYER_ID} characters")
        if sit.is_bot:
            bot_player(sit.player_id)
        name = display_name(sit.display_name, required=False)
        return Translated(g.SitDown(_seat(sit.seat), sit.player_id, sit.is_bot, name))
    if kind == "start_game":
        return Translated(g.StartGame())
    host_choices: dict[str | None, g.GameCommand] = {
        "next_round": g.NextRound(),
        "end_game": g.EndGame(),
        "play_again": g.PlayAgain(),
        "back_to_lobby": g.BackToLobby(),
    }
    if kind in host_choices:
        return Translated(host_choices[kind], host_only=True)
    raise invalid("MISSING_COMMAND", "the command is empty: set one of its kinds")
