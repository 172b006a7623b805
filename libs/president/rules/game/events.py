"""The events of a table, besides a round's own: seats, games, the lobby."""

from __future__ import annotations

from typing import NamedTuple

from president.rules import round as rnd


class SeatTaken(NamedTuple):
    """``player`` (shown as ``display_name``) took ``seat``."""

    seat: int
    player: str
    is_bot: bool
    display_name: str = ""


class SeatLeft(NamedTuple):
    """The player left (a bot finishes the round for them when one is under way)."""

    seat: int
    player: str
    removed: bool


class SeatFreed(NamedTuple):
    seat: int


class GameStarted(NamedTuple):
    game_no: int
    players: tuple[int, ...]


class SeatsChanged(NamedTuple):
    """``moved_from[k]`` is the seat whose player now sits at seat ``k``."""

    moved_from: tuple[int, ...]


class NextRoundStarted(NamedTuple):
    """The host chose the next round: the table waits for the deal."""


class GameEnded(NamedTuple):
    """The game is over: ``winners`` (joint when tied), or ``stopped`` with no winner."""

    winners: tuple[int, ...]
    stopped: bool


class GameInterrupted(NamedTuple):
    reason: str


class ReturnedToLobby(NamedTuple):
    pass


GameEvent = (
    SeatTaken
    | SeatLeft
    | SeatFreed
    | GameStarted
    | SeatsChanged
    | NextRoundStarted
    | GameEnded
    | GameInterrupted
    | ReturnedToLobby
    | rnd.Event
)
