"""Who may send a command, read from the table's state at the moment of the command.

The one place that decides rights: the gateway forwards every command with
the caller's account as the actor, and the table service checks it here on
the very table the engine decides on, so leaving, removal and a new host take
effect at once for every gateway replica. A token's claims are never trusted
for a right.

- A seat command (play, pass, return, react, chat, leave, a presence report) comes from the person
  seated there who has not left it: else SEAT_LEFT, SEAT_REMOVED (naming who
  removed them), READ_ONLY (no seat here) or NOT_YOUR_SEAT. One that names no
  seat acts for the seat its actor holds on this very table (the gateway
  never guesses it).
- A host action (next round, end the game, play again, back to lobby, add a
  bot, remove a seat, mute a seat, hand over the host role) comes from the table's host of
  that moment: else NOT_HOST (naming the host).
- Start the game: the host, or at a public or practice table any seated person.
- A person takes a seat only for themselves.

The actor ``server`` may do anything, and only it moves a table on by itself
(``MoveOn``). A closed table takes no command at all (TABLE_CLOSED).
"""

from __future__ import annotations

from president.game.v1 import game_pb2 as gpb
from president.hosting.host import SERVER
from president.hosting.host_role import host_has_left
from president.hosting.projection import Table, departure_of
from president.hosting.seat_views import seat_of
from president.hosting.visibility import PRIVATE
from president.rules import game as g
from president.servicekit.checks import invalid
from president.servicekit.errors import Code, ServiceError, denied, read_only
from president.services.table.commands import MoveOn, MuteSeat, TableCommand, Translated


def gone(table: Table, player_id: str) -> ServiceError | None:
    """The refusal for a player who left or was removed (None: they did not)."""
    departure = departure_of(table, player_id)
    seat = seat_of(table.game, player_id)
    still_leaving = seat is not None and table.game.seats[seat].leaving
    if departure is None or (seat is not None and not still_leaving):
        return None
    if departure.removed_by:
        return denied(
            "SEAT_REMOVED",
            f"{departure.removed_by} (the host) removed you from this table: "
            "you no longer act here",
        )
    return denied("SEAT_LEFT", "you left this table: you no longer act here")


def _host_is(table: Table) -> str:
    """The seated host's name in parentheses, as in ' (Ann)'; empty when the host sits nowhere."""
    seat = seat_of(table.game, table.host_player_id) if table.host_player_id else None
    name = table.game.seats[seat].display_name if seat is not None else ""
    return f" ({name})" if name else ""


def _require_host(table: Table, player_id: str, what: str) -> None:
    if table.host_player_id and player_id == table.host_player_id and not host_has_left(table):
        return
    refusal = gone(table, player_id)
    if refusal is not None:
        raise refusal
    if seat_of(table.game, player_id) is None:
        raise read_only()
    raise denied("NOT_HOST", f"only the table's host{_host_is(table)} may {what}")


def _require_seat(table: Table, player_id: str, seat: int | None) -> int:
    """The seat ``player_id`` acts for (``seat``, or None: theirs); refused unless they
    hold it."""
    refusal = gone(table, player_id)
    if refusal is not None:
        raise refusal
    held = seat_of(table.game, player_id)
    if held is None:
        raise read_only()
    if seat is not None and held != seat:
        raise denied("NOT_YOUR_SEAT", f"seat {seat} is not yours: you act only for your own seat")
    return held


_HOST_ACTIONS: dict[type, str] = {
    g.NextRound: "choose the next round",
    g.EndGame: "end the game",
    g.PlayAgain: "start another game",
    g.BackToLobby: "take the table back to the lobby",
    MuteSeat: "mute or unmute a seat",
}


def check_actor(translated: Translated, actor: gpb.Actor, table: Table) -> TableCommand:
    """The command to decide for ``actor`` on this table (a seat command that names no seat:
    for the seat they hold); PERMISSION_DENIED with a precise reason unless they may send
    it now."""
    if table.closed:
        raise ServiceError(
            Code.FAILED_PRECONDITION,
            "TABLE_CLOSED",
            "this table closed when nobody was left at it: create or join another",
        )
    player = actor.player_id
    command = translated.command
    for_seat = translated.for_seat
    if player == SERVER:
        if for_seat is not None:
            raise invalid("NO_SUCH_SEAT", "the server names the seat it acts for")
        return command
    if isinstance(command, MoveOn):
        raise denied("SERVER_ONLY", "only the server moves a table on by itself")
    if for_seat is not None:
        return for_seat(_require_seat(table, player, None))
    if translated.seat is not None:
        _require_seat(table, player, translated.seat)
        return command
    if translated.removal:
        _require_host(table, player, "remove a player")
        assert isinstance(command, g.Leave)
        seats = table.game.seats
        if command.seat < len(seats) and seats[command.seat].player == player:
            raise ServiceError(
                Code.FAILED_PRECONDITION,
                "OWN_SEAT",
                "the host leaves with Leave, not by removing their own seat",
            )
        return command
    if isinstance(command, g.SitDown):
        if command.is_bot:
            _require_host(table, player, "seat a bot")
        elif command.player != player:
            raise denied("NOT_YOUR_SEAT", "a person takes a seat only for themselves")
        return command
    if isinstance(command, g.StartGame):
        held = seat_of(table.game, player)
        if table.visibility == PRIVATE or held is None:
            _require_host(table, player, "start the game")
        else:
            _require_seat(table, player, held)
        return command
    if translated.host_only:
        _require_host(table, player, _HOST_ACTIONS.get(type(command), "hand over the host role"))
        return command
    raise denied("NOT_ALLOWED", "this command is not yours to send")  # pragma: no cover
