"""``president.game.v1.Command`` to the engine's commands, and what right each needs.

Cards arrive as text: a text that names no card is ``MALFORMED_CARDS`` (with
the sentence of :func:`president.rules.cards.parse_card`), the same card
twice is ``NOT_IN_HAND``. Who may send a command is decided from the table's
state by :mod:`president.services.table.rights`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from president.game.v1 import game_pb2 as gpb
from president.rules import game as g
from president.rules import round as rnd
from president.rules.button import named_twice
from president.rules.cards import CardSyntaxError, parse_card, to_mask
from president.servicekit.checks import bot_player, invalid, reaction
from president.servicekit.names import display_name

MAX_CARDS = 54
MAX_PLAYER_ID = 64
MAX_SEAT = 64


@dataclass(frozen=True)
class React:
    """Show a reaction: a service command, not a move of the game."""

    seat: int
    reaction: str


@dataclass(frozen=True)
class HandOverHost:
    """The host hands the host role to the human in ``seat``: a service command."""

    seat: int


@dataclass(frozen=True)
class MoveOn:
    """The server: the table waited too long after a round or a game, and moves on."""

    kind: str
    game_no: int
    round_no: int
    #: The wait's timer key (for the bots, the table version they waited on).
    timer_key: int = 0


@dataclass(frozen=True)
class SetPresence:
    """A gateway replica reports a seat's person connected or not: a service command."""

    seat: int
    connected: bool
    gateway: str


MAX_GATEWAY_ID = 64

TableCommand = g.GameCommand | rnd.Command | React | HandOverHost | MoveOn | SetPresence


@dataclass(frozen=True)
class Translated:
    """An engine command with what the service needs to know about it."""

    command: TableCommand
    #: The seat the command acts for, if it is a seat command.
    seat: int | None = None
    #: Leave by the host: removes another player.
    removal: bool = False
    #: Only the table's host of the moment may send it.
    host_only: bool = False


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
    if kind == "set_presence":
        presence = command.set_presence
        seat = _seat(presence.seat)
        if not 0 < len(presence.gateway) <= MAX_GATEWAY_ID:
            raise invalid(
                "INVALID_GATEWAY",
                f"a presence report names its gateway replica in 1 to {MAX_GATEWAY_ID} characters",
            )
        return Translated(SetPresence(seat, presence.connected, presence.gateway), seat=seat)
    if kind == "leave":
        seat = _seat(command.leave.seat)
        removed = command.leave.removed
        return Translated(g.Leave(seat, removed), seat=None if removed else seat, removal=removed)
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
