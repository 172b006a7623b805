"""Deciding a table's commands: one handler per command type, ``_DECIDE`` by type.

The round's commands pass through to :func:`president.rules.round.decide`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from president.rules import round as rnd
from president.rules.cards import DECK_WITH_JOKERS_SIZE, STANDARD_DECK_SIZE
from president.rules.errors import ErrorCode, Rejected
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
from president.rules.game.dealing import carried_standings, deal_order, hand_size
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
from president.rules.game.state import MIN_TO_PLAY, GamePhase, GameState
from president.rules.options import OptionError, check_player_count
from president.rules.round.decisions import DECIDE as DECIDE_IN_ROUND

#: Read once: on Python 3.11 each ``GamePhase.X`` costs an enum lookup, and every
#: move checks it.
_ROUND = GamePhase.ROUND


def decide(game: GameState, command: GameCommand | rnd.Command) -> list[GameEvent]:
    """The events a command causes, or :class:`Rejected` saying why it is refused."""
    try:
        handler = _DECIDE[type(command)]
    except KeyError:
        raise TypeError(f"not a game command: {command!r}") from None
    return handler(game, command)


def _decide_start(game: GameState, command: StartGame) -> list[GameEvent]:
    return _new_game(game, GamePhase.LOBBY, "a game is already under way")


def _decide_next_round(game: GameState, command: NextRound) -> list[GameEvent]:
    if game.phase != GamePhase.BETWEEN_ROUNDS:
        raise Rejected(ErrorCode.WRONG_PHASE, "the next round starts only between rounds")
    if game.newcomers:
        return [NextRoundStarted()]  # a newcomer: the next round starts like round 1
    return _seat_changes(game)


def _decide_end(game: GameState, command: EndGame) -> list[GameEvent]:
    if game.phase not in (GamePhase.BETWEEN_ROUNDS, GamePhase.DEALING):
        raise Rejected(ErrorCode.WRONG_PHASE, "the game can be ended only between rounds")
    if game.options.game_end == "unlimited":
        best = max(game.scores[s] for s in game.occupied)
        return [GameEnded(tuple(s for s in game.occupied if game.scores[s] == best), False)]
    return [GameEnded((), True)]


def _decide_play_again(game: GameState, command: PlayAgain) -> list[GameEvent]:
    return _new_game(game, GamePhase.GAME_OVER, "play again is offered once a game is over")


def _new_game(game: GameState, phase: GamePhase, refusal: str) -> list[GameEvent]:
    """A new game with the seated players, from ``phase`` (else WRONG_PHASE, ``refusal``)."""
    if game.phase != phase:
        raise Rejected(ErrorCode.WRONG_PHASE, refusal)
    try:
        check_player_count(game.options, len(game.occupied))
    except OptionError as error:
        raise Rejected(ErrorCode.NOT_ENOUGH_PLAYERS, str(error)) from None
    return [GameStarted(game.game_no + 1, game.occupied)]


def _decide_back_to_lobby(game: GameState, command: BackToLobby) -> list[GameEvent]:
    if game.phase != GamePhase.GAME_OVER:
        raise Rejected(ErrorCode.WRONG_PHASE, "the table goes back to the lobby after a game")
    return [ReturnedToLobby()]


def _decide_round(game: GameState, command: rnd.Command) -> list[GameEvent]:
    if game.phase != _ROUND or game.round is None:
        raise Rejected(ErrorCode.WRONG_PHASE, "no round is being played at this table")
    # rnd.decide(game.round, command), its table read here: one call less per move.
    events: list[GameEvent] = list(DECIDE_IN_ROUND[type(command)](game.round, command))
    ended = next((e for e in events if isinstance(e, rnd.RoundEnded)), None)
    if ended is not None:
        events.extend(_after_round(game, ended))
    return events


def _after_round(game: GameState, ended: rnd.RoundEnded) -> list[GameEvent]:
    events: list[GameEvent] = []
    if ended.game_over:
        events.append(GameEnded(ended.winners, False))
    leaving = [i for i, seat in enumerate(game.seats) if seat.leaving]
    events.extend(SeatFreed(i) for i in leaving)
    remaining = len(game.occupied) - len(leaving)
    if remaining < MIN_TO_PLAY and not ended.game_over:
        events.append(GameInterrupted(f"only {remaining} players are left"))
        events.append(ReturnedToLobby())
    return events


def _decide_sit(game: GameState, command: SitDown) -> list[GameEvent]:
    if not 0 <= command.seat < len(game.seats):
        raise Rejected(ErrorCode.NO_SUCH_SEAT, f"seat {command.seat} is not a seat of this table")
    if game.seats[command.seat].occupied:
        raise Rejected(ErrorCode.SEAT_TAKEN, f"seat {command.seat} is taken")
    if game.phase in (GamePhase.ROUND, GamePhase.DEALING):
        raise Rejected(ErrorCode.WRONG_PHASE, "seats are taken between rounds or in the lobby")
    if not command.player.strip():
        raise Rejected(ErrorCode.INVALID_PLAYER, "a player needs a name")
    # Bots of one level share one account: only a person is seated once.
    if not command.is_bot and any(seat.player == command.player for seat in game.seats):
        raise Rejected(ErrorCode.ALREADY_SEATED, f"{command.player} already has a seat here")
    if command.player in game.departed:
        raise Rejected(
            ErrorCode.LEFT_THIS_GAME,
            "you left this table during the game under way: you cannot take a seat "
            "here again until it ends",
        )
    name = command.seated_name()
    if len(name) > 40:
        raise Rejected(ErrorCode.INVALID_PLAYER, "a display name has at most 40 characters")
    return [SeatTaken(command.seat, command.player, command.is_bot, name)]


def _decide_leave(game: GameState, command: Leave) -> list[GameEvent]:
    if not 0 <= command.seat < len(game.seats) or not game.seats[command.seat].occupied:
        raise Rejected(ErrorCode.NO_SUCH_SEAT, f"nobody sits in seat {command.seat}")
    seat = game.seats[command.seat]
    if seat.leaving:
        raise Rejected(ErrorCode.ALREADY_LEFT, f"{seat.player} has already left")
    left = SeatLeft(command.seat, seat.player or "", command.removed)
    in_round = (
        game.phase == GamePhase.ROUND
        and game.round is not None
        and (command.seat in game.round.players)
    )
    if in_round:
        return [left]  # a bot finishes the round; the seat is freed when it ends
    events: list[GameEvent] = [left, SeatFreed(command.seat)]
    remaining = len(game.occupied) - 1
    if game.phase in (GamePhase.BETWEEN_ROUNDS, GamePhase.DEALING) and remaining < MIN_TO_PLAY:
        events.append(GameInterrupted(f"only {remaining} players are left"))
        events.append(ReturnedToLobby())
    return events


def _seat_changes(game: GameState) -> list[GameEvent]:
    if not game.options.change_seats or not game.standings:
        return [NextRoundStarted()]
    positions = sorted(game.standings)
    moved_from = list(range(len(game.seats)))
    for position, seat in zip(positions, game.standings, strict=True):
        moved_from[position] = seat
    return [SeatsChanged(tuple(moved_from)), NextRoundStarted()]


def _decide_deal(game: GameState, command: DealRound) -> list[GameEvent]:
    if game.phase != GamePhase.DEALING:
        raise Rejected(ErrorCode.WRONG_PHASE, "the table is not waiting for a deal")
    players = game.occupied
    hands = command.hands
    if len(hands) != len(game.seats):
        raise Rejected(ErrorCode.BAD_DEAL, f"a deal gives one hand per seat ({len(game.seats)})")
    for seat, hand in enumerate(hands):
        if hand and seat not in players:
            raise Rejected(ErrorCode.BAD_DEAL, f"seat {seat} is empty but was dealt cards")
    order = deal_order(game)
    deck = DECK_WITH_JOKERS_SIZE if game.options.jokers else STANDARD_DECK_SIZE
    limit = hand_size(game)
    dealt = limit * len(players) if limit else deck
    for position, seat in enumerate(order):
        expected = dealt // len(players) + (1 if position < dealt % len(players) else 0)
        if hands[seat].bit_count() != expected:
            raise Rejected(
                ErrorCode.BAD_DEAL,
                f"seat {seat} should receive {expected} cards in deal order, "
                f"not {hands[seat].bit_count()}",
            )
    round_no = game.round_no + 1
    standings = carried_standings(game, players)
    try:
        _, events = rnd.start_round(
            game.options,
            hands,
            round_no=round_no,
            players=players,
            previous_standings=standings if round_no > 1 else None,
            scores=game.scores,
            set_aside=command.set_aside,
        )
    except OptionError as error:
        raise Rejected(ErrorCode.BAD_DEAL, str(error)) from None
    return list(events)


#: The handler of each command type: the round's commands pass through to the round.
_DECIDE: dict[type, Callable[[GameState, Any], list[GameEvent]]] = {
    rnd.PlayCards: _decide_round,
    rnd.Pass: _decide_round,
    rnd.ReturnCards: _decide_round,
    rnd.Timeout: _decide_round,
    SitDown: _decide_sit,
    Leave: _decide_leave,
    StartGame: _decide_start,
    DealRound: _decide_deal,
    NextRound: _decide_next_round,
    EndGame: _decide_end,
    PlayAgain: _decide_play_again,
    BackToLobby: _decide_back_to_lobby,
}
