"""A whole game at a table: seats and people, rounds, points, the host's choices.

Same shape as a round: ``decide(game, command) -> events`` and
``evolve(game, event) -> game``. Round commands (play, pass, return, timeout)
pass through to :mod:`president.rules.round`; the deal comes in as a command
(``DealRound``), so the engine never draws a random number itself.

This is the public surface; the modules of the package each hold one job:
``commands`` and ``events`` (the named tuples), ``state`` (the table, its
seats and phases), ``dealing`` (deal order and hand sizes), ``decisions``
and ``evolution`` (the tables of handlers by command and event type), and
``sentences`` (the words for a table's own events).
"""

from president.rules.game.commands import (
    BackToLobby,
    DealRound,
    EndGame,
    GameCommand,
    Leave,
    NextRound,
    PlayAgain,
    SitDown,
    StartGame,
)
from president.rules.game.dealing import deal_order, hand_size
from president.rules.game.decisions import decide
from president.rules.game.events import (
    GameEnded,
    GameEvent,
    GameInterrupted,
    GameStarted,
    NextRoundStarted,
    ReturnedToLobby,
    SeatFreed,
    SeatLeft,
    SeatsChanged,
    SeatTaken,
)
from president.rules.game.evolution import evolve, evolve_all, replay, step
from president.rules.game.sentences import describe_game_event
from president.rules.game.state import MIN_TO_PLAY, GamePhase, GameState, Seat, bot_seats, new_table

__all__ = [
    "MIN_TO_PLAY",
    "BackToLobby",
    "DealRound",
    "EndGame",
    "GameCommand",
    "GameEnded",
    "GameEvent",
    "GameInterrupted",
    "GamePhase",
    "GameStarted",
    "GameState",
    "Leave",
    "NextRound",
    "NextRoundStarted",
    "PlayAgain",
    "ReturnedToLobby",
    "Seat",
    "SeatFreed",
    "SeatLeft",
    "SeatTaken",
    "SeatsChanged",
    "SitDown",
    "StartGame",
    "bot_seats",
    "deal_order",
    "decide",
    "describe_game_event",
    "evolve",
    "evolve_all",
    "hand_size",
    "new_table",
    "replay",
    "step",
]
