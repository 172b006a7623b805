"""``president.game.v1.Command`` to the engine's commands, and who may send them.

Cards arrive as text: a text that names no card is ``MALFORMED_CARDS`` (with
the sentence of :func:`president.rules.cards.parse_card`), the same card
twice is ``NOT_IN_HAND``. A seat command (play, pass, return, react, leave
one's own seat) must come from the actor holding that seat; the actor
``server`` may do anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from president.game.v1 import game_pb2 as gpb
from president.hosting.host import SERVER
from president.rules import game as g
from president.rules import round as rnd
from president.rules.button import named_twice
from president.rules.cards import CardSyntaxError, parse_card, to_mask
from president.servicekit.checks import bot_player, invalid, reaction
from president.servicekit.errors import ServiceError

MAX_CARDS = 54
MAX_PLAYER_ID = 64
MAX_SEAT = 64


@dataclass(frozen=True)
class React:
    """Show a reaction: a service command, not a move of the game."""

    seat: int
    reaction: str


TableCommand = g.GameCommand | rnd.Command | React


@dataclass(frozen=True)
class Translated:
    """An engine command with what the service needs to know about it."""

    command: TableCommand
    #: The seat the command acts for, if it is a seat command.
    seat: int | None = None
    #: Leave by the host: removes another player.
    removal: bool = False


def parse_card_texts(texts: Sequence[str], *, allow_empty: bool = False) -> int:
    """The mask of card texts; MALFORMED_CARDS, or NOT_IN_HAND for a card written twice."""
    if len(texts) > MAX_CARDS:
        raise invalid("MALFORMED_CARDS", f"at most {MAX_CARDS} cards, not {len(texts)}")
    if not texts and not allow_empty:
        raise invalid("MALFORMED_CARDS", "name at least one card, as 10H, QS or 3C")
    cards = []
    for text in texts:
        try:
            cards.append(parse_card(text))
        except CardSyntaxError as error:
            raise invalid("MALFORMED_CARDS", str(error)) from None
    twice = named_twice(cards)
    if twice is not None:
        raise twice
    return to_mask(cards)


def _seat(value: int) -> int:
    if not 0 <= value < MAX_SEAT:
        raise invalid("NO_SUCH_SEAT", f"seat {value} is not a seat of any table")
    return value


def translate(command: gpb.Command) -> Translated:
    """The engine command of a protobuf command; ServiceError or Rejected for bad input."""
    kind = command.WhichOneof("kind")
    if kind == "play_cards":
        play = command.play_cards
        version = play.trick_version if play.HasField("trick_version") else None
        seat = _seat(play.seat)
        mask = parse_card_texts(play.cards)
        return Translated(rnd.PlayCards(seat, mask, version), seat=seat)
    if kind == "pass":
        passing = getattr(command, "pass")
        version = passing.trick_version if passing.HasField("trick_version") else None
        seat = _seat(passing.seat)
        return Translated(rnd.Pass(seat, version), seat=seat)
    if kind == "return_cards":
        returned = command.return_cards
        seat = _seat(returned.seat)
        return Translated(rnd.ReturnCards(seat, parse_card_texts(returned.cards)), seat=seat)
    if kind == "react":
        seat = _seat(command.react.seat)
        return Translated(React(seat, reaction(command.react.reaction)), seat=seat)
    if kind == "leave":
        seat = _seat(command.leave.seat)
        removed = command.leave.removed
        return Translated(g.Leave(seat, removed), seat=None if removed else seat, removal=removed)
    if kind == "sit_down":
        sit = command.sit_down
        if len(sit.player_id) > MAX_PLAYER_ID:
            raise invalid("INVALID_PLAYER", f"a player id has at most {MAX_PLAYER_ID} characters")
        if sit.is_bot:
            bot_player(sit.player_id)
        return Translated(g.SitDown(_seat(sit.seat), sit.player_id, sit.is_bot, sit.display_name))
    simple: dict[str | None, g.GameCommand] = {
        "start_game": g.StartGame(),
        "next_round": g.NextRound(),
        "end_game": g.EndGame(),
        "play_again": g.PlayAgain(),
        "back_to_lobby": g.BackToLobby(),
    }
    if kind in simple:
        return Translated(simple[kind])
    raise invalid("MISSING_COMMAND", "the command is empty: set one of its kinds")


def check_actor(
    translated: Translated,
    actor: gpb.Actor,
    occupant: str | None,
    host_player_id: str,
    *,
    leaving: bool = False,
) -> None:
    """PERMISSION_DENIED (NOT_YOUR_SEAT) unless ``actor`` may send this command.

    ``occupant`` is the player in the command's seat, ``leaving`` whether
    they left it (a bot plays it until the round ends). A seat command needs
    the actor's seat to be that seat and the seat to be the actor's, and the
    actor not to have left it (SEAT_LEFT); a host's removal needs the table's
    host. ``server`` may do anything.
    """
    if actor.player_id == SERVER:
        return
    if translated.removal:
        if not host_player_id or actor.player_id != host_player_id:
            raise ServiceError(
                grpc.StatusCode.PERMISSION_DENIED,
                "NOT_HOST",
                "only the table's host removes a player",
            )
        return
    if translated.seat is None:
        return
    if actor.seat != translated.seat or (occupant is not None and occupant != actor.player_id):
        raise ServiceError(
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_SEAT",
            f"seat {translated.seat} is not yours: you act only for your own seat",
        )
    if leaving:
        raise ServiceError(
            grpc.StatusCode.PERMISSION_DENIED,
            "SEAT_LEFT",
            "you left this table: a bot plays your seat until the round ends",
        )
