"""The sentences a player reads for a table's own events (a round's: see render)."""

from __future__ import annotations

from president.rules.game.events import (
    GameEnded,
    GameEvent,
    GameInterrupted,
    GameStarted,
    ReturnedToLobby,
    SeatFreed,
    SeatLeft,
    SeatsChanged,
    SeatTaken,
)


def describe_game_event(event: GameEvent, seat_names: list[str]) -> str | None:
    """A sentence for the game-level events (round events: see render)."""

    def who(seat: int) -> str:
        return seat_names[seat] if seat < len(seat_names) else f"Seat {seat}"

    if isinstance(event, SeatTaken):
        name = event.display_name or event.player
        return f"{name} sits at seat {event.seat}{' (bot)' if event.is_bot else ''}."
    if isinstance(event, SeatLeft):
        verb = "was removed" if event.removed else "left"
        known = seat_names[event.seat] if event.seat < len(seat_names) else ""
        return f"{known or event.player} {verb}; a bot finishes the round for them."
    if isinstance(event, SeatFreed):
        return f"Seat {event.seat} is free."
    if isinstance(event, GameStarted):
        return f"Game {event.game_no} starts with {len(event.players)} players."
    if isinstance(event, SeatsChanged):
        return "Seats change by standings: " + ", ".join(
            f"{who(i)} now at seat {i}" for i in range(len(event.moved_from))
        )
    if isinstance(event, GameEnded):
        if event.stopped:
            return "The game is stopped, with no winner."
        return (
            "Game over. Winner"
            + ("s: " if len(event.winners) > 1 else ": ")
            + ", ".join(who(s) for s in event.winners)
            + "."
        )
    if isinstance(event, GameInterrupted):
        return f"The game is interrupted: {event.reason}."
    if isinstance(event, ReturnedToLobby):
        return "The table is back in the lobby."
    return None
