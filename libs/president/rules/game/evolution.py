"""Folding events into a table: one handler per event type, ``_EVOLVE`` by type.

A round's own events change only the round; :func:`evolve_all` folds a run
of them into the round and rebuilds the table once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields, replace
from typing import Any

from president.rules import round as rnd
from president.rules.game.commands import GameCommand
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
from president.rules.game.state import IN_GAME, GamePhase, GameState, Seat, new_table
from president.rules.options import Options


def evolve(game: GameState, event: GameEvent) -> GameState:
    """Fold one event into the table."""
    try:
        handler = _EVOLVE[type(event)]
    except KeyError:  # pragma: no cover
        raise TypeError(f"not a game event: {event!r}") from None
    evolved: GameState = handler(game, event)
    return evolved


def _evolve_round_started(game: GameState, event: rnd.RoundStarted) -> GameState:
    return replace(
        game,
        phase=GamePhase.ROUND,
        round_no=event.round_no,
        round=rnd.initial_state(event),
        newcomers=frozenset(),
    )


def _evolve_round_ended(game: GameState, event: rnd.RoundEnded) -> GameState:
    assert game.round is not None
    return replace(
        game,
        round=rnd.evolve(game.round, event),
        phase=GamePhase.BETWEEN_ROUNDS,
        scores=event.totals,
        standings=event.standings,
    )


def _evolve_in_round(game: GameState, event: rnd.Event) -> GameState:
    assert game.round is not None
    return replace(game, round=rnd.evolve(game.round, event))


def _evolve_seat_taken(game: GameState, event: SeatTaken) -> GameState:
    seated = _set_seat(
        game, event.seat, Seat(event.player, event.is_bot, display_name=event.display_name)
    )
    if game.phase not in IN_GAME:
        return seated
    # A newcomer between rounds: no score and no role of the seat's last occupant.
    scores = list(seated.scores)
    scores[event.seat] = 0
    return replace(seated, scores=tuple(scores), newcomers=game.newcomers | {event.seat})


def _evolve_seat_left(game: GameState, event: SeatLeft) -> GameState:
    left = _set_seat(game, event.seat, replace(game.seats[event.seat], leaving=True))
    if game.phase not in IN_GAME:
        return left
    return replace(left, departed=game.departed | {event.player})


def _evolve_seat_freed(game: GameState, event: SeatFreed) -> GameState:
    return _set_seat(game, event.seat, Seat())


def _evolve_game_started(game: GameState, event: GameStarted) -> GameState:
    return replace(
        game,
        phase=GamePhase.DEALING,
        game_no=event.game_no,
        round_no=0,
        scores=(0,) * len(game.seats),
        standings=(),
        round=None,
        winners=(),
        stopped=False,
        departed=frozenset(),
        newcomers=frozenset(),
    )


def _evolve_next_round(game: GameState, event: NextRoundStarted) -> GameState:
    return replace(game, phase=GamePhase.DEALING)


def _evolve_seats_changed(game: GameState, event: SeatsChanged) -> GameState:
    order = event.moved_from
    where = {old: new for new, old in enumerate(order)}
    return replace(
        game,
        seats=tuple(game.seats[old] for old in order),
        scores=tuple(game.scores[old] for old in order),
        standings=tuple(where[seat] for seat in game.standings),
        newcomers=frozenset(where[seat] for seat in game.newcomers),
    )


def _evolve_game_ended(game: GameState, event: GameEnded) -> GameState:
    return replace(
        game,
        phase=GamePhase.GAME_OVER,
        winners=event.winners,
        stopped=event.stopped,
        departed=frozenset(),
    )


def _evolve_interrupted(game: GameState, event: GameInterrupted) -> GameState:
    return replace(game, phase=GamePhase.GAME_OVER, stopped=True, departed=frozenset())


def _evolve_back_in_lobby(game: GameState, event: ReturnedToLobby) -> GameState:
    return replace(
        game,
        phase=GamePhase.LOBBY,
        round=None,
        round_no=0,
        standings=(),
        departed=frozenset(),
        newcomers=frozenset(),
    )


def evolve_all(game: GameState, events: Iterable[GameEvent]) -> GameState:
    """Fold several events into the table: the same as :func:`evolve` one by one.

    Most events of a round change only the round; a run of them is folded
    into the round and the table rebuilt once, not once per event.
    """
    round_state = game.round
    round_changed = False
    for event in events:
        if round_state is not None and type(event) in _ROUND_EVENTS:
            round_state = rnd.evolve(round_state, event)  # type: ignore[arg-type]
            round_changed = True
            continue
        if round_changed:
            game = _with_round(game, round_state)
            round_changed = False
        game = evolve(game, event)
        round_state = game.round
    return _with_round(game, round_state) if round_changed else game


_GAME_FIELDS = tuple(field.name for field in fields(GameState))
_ROUND_FIELD = _GAME_FIELDS.index("round")


def _with_round(game: GameState, round_state: rnd.RoundState | None) -> GameState:
    """``replace(game, round=round_state)``, faster: once per command of a log
    the audit replays (every field, those added later too, in the order of the class)."""
    values = [getattr(game, name) for name in _GAME_FIELDS]
    values[_ROUND_FIELD] = round_state
    return GameState(*values)


_ROUND_EVENTS = {
    rnd.CardsGiven,
    rnd.PlayStarted,
    rnd.CardsPlayed,
    rnd.Passed,
    rnd.TrickClosed,
    rnd.RevolutionChanged,
    rnd.PlayerWentOut,
    rnd.TimedOut,
}


#: The handler of each event type: most events of a round change only the round.
_EVOLVE: dict[type, Callable[[GameState, Any], GameState]] = {
    **dict.fromkeys(_ROUND_EVENTS, _evolve_in_round),
    rnd.RoundStarted: _evolve_round_started,
    rnd.RoundEnded: _evolve_round_ended,
    SeatTaken: _evolve_seat_taken,
    SeatLeft: _evolve_seat_left,
    SeatFreed: _evolve_seat_freed,
    GameStarted: _evolve_game_started,
    NextRoundStarted: _evolve_next_round,
    SeatsChanged: _evolve_seats_changed,
    GameEnded: _evolve_game_ended,
    GameInterrupted: _evolve_interrupted,
    ReturnedToLobby: _evolve_back_in_lobby,
}


def _set_seat(game: GameState, index: int, seat: Seat) -> GameState:
    seats = list(game.seats)
    seats[index] = seat
    return replace(game, seats=tuple(seats))


def step(game: GameState, command: GameCommand | rnd.Command) -> tuple[GameState, list[GameEvent]]:
    """``decide`` then ``evolve``."""
    events = decide(game, command)
    for event in events:
        game = evolve(game, event)
    return game, events


def replay(events: Sequence[GameEvent], options: Options, seat_count: int) -> GameState:
    """The table after a list of events, from an empty table."""
    game = new_table(options, seat_count)
    for event in events:
        game = evolve(game, event)
    return game
