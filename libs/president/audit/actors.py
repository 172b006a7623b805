"""Who may cause each command of a table's log: the actor a stored command names is checked.

Every stored event names its ``actor`` (an account id, a bot level's account
``bot:<level>`` or ``server``). A play, pass or return comes from the account
seated there, or the bot's level's account when a bot plays the seat (a bot's
seat, or one its player left: :func:`president.hosting.autoplay.bot_actor`);
a timeout, a deal, a commitment and a reveal from the ``server``; a
host action (start, next round, end, back to the lobby, adding a bot,
removing a player) from the table's host of that moment, as the table
projection has it (:attr:`president.hosting.projection.Table.host_player_id`),
or the ``server`` acting for the table; sitting down from the player
themselves (or the host, or the server); leaving from the player who leaves;
a reaction from the player seated there or its bot; a presence report and a
chat message from the person seated there (never the server); muting a seat from
the host (or the server). Every event of one
command names the same actor. Raises :class:`~president.audit.reports.Found`
at the first event that breaks one.
"""

from __future__ import annotations

from collections.abc import Sequence

from president.audit.commands import Command
from president.audit.reports import Found
from president.hosting.autoplay import bot_actor
from president.hosting.events import (
    ChatPosted,
    DealCommitted,
    DealRevealed,
    DealSecretLost,
    ReactionShown,
    SeatMuted,
    SeatPresence,
    TableEvent,
)
from president.hosting.projection import Table
from president.rules import game as g
from president.rules import round as rnd
from president.store import StoredEvent

SERVER = "server"
"""The actor of what the table service does itself (as :data:`president.hosting.host.SERVER`)."""

_HOST_COMMANDS = (g.StartGame, g.PlayAgain, g.NextRound, g.EndGame, g.BackToLobby)
_SEAT_COMMANDS = (rnd.PlayCards, rnd.Pass, rnd.ReturnCards)
_SERVER_COMMANDS = (rnd.Timeout, g.DealRound)


def check_same_actor(group: Sequence[StoredEvent]) -> str:
    """The actor of a command's events (they name one); Found at the first that names another."""
    actor = group[0].metadata.get("actor")
    for event in group[1:]:
        if event.metadata.get("actor") != actor:
            raise Found(
                event,
                f"its actor {event.metadata.get('actor')!r} differs from {actor!r}, the actor "
                "of the command it belongs to",
            )
    return str(actor)


def check_command_actor(stored: StoredEvent, command: Command, table: Table, actor: str) -> None:
    """``actor`` may send ``command`` at ``table`` (as it was before the command)."""
    game = table.game
    if isinstance(command, _SEAT_COMMANDS):
        seats = game.seats
        seat = command.seat
        if 0 <= seat < len(seats):
            sitting = seats[seat]
            if actor != (bot_actor(game, seat) if sitting.bot_plays else sitting.player):
                _seat_actor(stored, game, seat, actor, _move_words(command))
    elif isinstance(command, _SERVER_COMMANDS):
        if actor != SERVER:
            what = "timeout" if isinstance(command, rnd.Timeout) else "deal"
            raise Found(stored, f"a {what} comes from the server, but the log names {actor!r}")
    elif isinstance(command, _HOST_COMMANDS):
        _host_actor(stored, table, actor)
    elif isinstance(command, g.SitDown):
        if command.is_bot:
            _host_actor(stored, table, actor, "adding a bot")
        elif actor not in (command.player, table.host_player_id, SERVER):
            raise Found(
                stored,
                f"{command.player!r} sits down at seat {command.seat}, but the log names "
                f"{actor!r}, who is neither that player nor the host",
            )
    elif isinstance(command, g.Leave):
        if command.removed:
            _host_actor(stored, table, actor, "removing a player")
            return
        seated = game.seats[command.seat].player if command.seat < len(game.seats) else None
        if actor not in (seated, SERVER):
            raise Found(
                stored,
                f"seat {command.seat} is left by {actor!r}, but {seated!r} sits there",
            )


def check_service_actor(stored: StoredEvent, event: TableEvent, table: Table, actor: str) -> None:
    """``actor`` may cause the table service's own ``event`` at ``table``."""
    if isinstance(event, (DealCommitted, DealRevealed, DealSecretLost)):
        if actor != SERVER:
            what = "commitment" if isinstance(event, DealCommitted) else "reveal"
            raise Found(
                stored, f"a deal's {what} comes from the server, but the log names {actor!r}"
            )
    elif isinstance(event, ReactionShown):
        seats = table.game.seats
        seated = seats[event.seat].player if 0 <= event.seat < len(seats) else None
        if seated is not None and actor not in (seated, bot_actor(table.game, event.seat)):
            raise Found(
                stored,
                f"the reaction of seat {event.seat} names {actor!r} as its actor, but "
                f"{seated!r} sits there",
            )
    elif isinstance(event, SeatPresence | ChatPosted):
        what = "presence report" if isinstance(event, SeatPresence) else "chat message"
        seats = table.game.seats
        occupant = seats[event.seat] if 0 <= event.seat < len(seats) else None
        if occupant is None or occupant.player is None or occupant.is_bot:
            raise Found(stored, f"a {what} of seat {event.seat}, where no person sits")
        if actor != occupant.player:
            raise Found(
                stored,
                f"the {what} of seat {event.seat} names {actor!r} as its actor, but "
                f"{occupant.player!r} sits there",
            )
    elif isinstance(event, SeatMuted):
        _host_actor(stored, table, actor, "muting a seat")


def _seat_actor(stored: StoredEvent, game: g.GameState, seat: int, actor: str, what: str) -> None:
    if not 0 <= seat < len(game.seats):
        return  # the rules refuse it
    sitting = game.seats[seat]
    allowed = bot_actor(game, seat) if sitting.bot_plays else sitting.player
    if actor != allowed:
        who = "its bot" if sitting.bot_plays else f"{sitting.player!r}, who sits there"
        raise Found(
            stored,
            f"the {what} of seat {seat} names {actor!r} as its actor, but only {who} "
            f"({allowed!r}) acts for seat {seat}",
        )


def _host_actor(stored: StoredEvent, table: Table, actor: str, what: str = "") -> None:
    if actor == SERVER or (table.host_player_id and actor == table.host_player_id):
        return
    host = repr(table.host_player_id) if table.host_player_id else "nobody"
    raise Found(
        stored,
        f"{what or 'a host action'} comes from the table's host, who is {host} now, "
        f"but the log names {actor!r}",
    )


def _move_words(command: rnd.PlayCards | rnd.Pass | rnd.ReturnCards) -> str:
    if isinstance(command, rnd.PlayCards):
        return "play"
    return "pass" if isinstance(command, rnd.Pass) else "return"
