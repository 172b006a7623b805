"""A whole game at a table: seats and people, rounds, points, the host's choices.

Same shape as a round: ``decide(game, command) -> events`` and
``evolve(game, event) -> game``. Round commands (play, pass, return, timeout)
pass through to :mod:`president.rules.round`; the deal comes in as a command
(``DealRound``), so the engine never draws a random number itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, NamedTuple

from president.rules import round as rnd
from president.rules.cards import DECK_WITH_JOKERS_SIZE, STANDARD_DECK_SIZE
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import OptionError, Options, check_player_count

MIN_TO_PLAY = 3


class GamePhase(StrEnum):
    """Where a table is; the values are the strings the wire and the store carry."""

    LOBBY = "lobby"
    DEALING = "dealing"
    ROUND = "round"
    BETWEEN_ROUNDS = "between_rounds"
    GAME_OVER = "game_over"


# --------------------------------------------------------------------------- commands
class SitDown(NamedTuple):
    """``player`` takes the free ``seat`` (a bot when ``is_bot``)."""

    seat: int
    player: str
    is_bot: bool = False
    display_name: str = ""


class Leave(NamedTuple):
    """The player of ``seat`` leaves (``removed``: the host removed them)."""

    seat: int
    removed: bool = False


class StartGame(NamedTuple):
    """Start a game with the seated players."""


class DealRound(NamedTuple):
    """The dealer's hands for the next round (masks by seat) and the cards set aside."""

    hands: tuple[int, ...]
    set_aside: int = 0


class NextRound(NamedTuple):
    """The host asks for the next round."""


class EndGame(NamedTuple):
    """The host ends the game between rounds."""


class PlayAgain(NamedTuple):
    """A new game with the same options, scores at zero."""


class BackToLobby(NamedTuple):
    """The table goes back to the lobby."""


GameCommand = (
    SitDown | Leave | StartGame | DealRound | NextRound | EndGame | PlayAgain | BackToLobby
)


# --------------------------------------------------------------------------- events
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


# --------------------------------------------------------------------------- state
@dataclass(frozen=True, slots=True)
class Seat:
    """Who sits in a seat. ``leaving``: they left mid-round and a bot plays for them."""

    player: str | None = None
    is_bot: bool = False
    leaving: bool = False
    display_name: str = ""

    @property
    def occupied(self) -> bool:
        return self.player is not None

    @property
    def bot_plays(self) -> bool:
        return self.player is not None and (self.is_bot or self.leaving)


@dataclass(frozen=True, slots=True)
class GameState:
    """A table: its options, seats, scores and the round under way."""

    options: Options
    seats: tuple[Seat, ...]
    phase: GamePhase = GamePhase.LOBBY
    game_no: int = 0
    round_no: int = 0
    scores: tuple[int, ...] = ()
    standings: tuple[int, ...] = ()
    round: rnd.RoundState | None = None
    winners: tuple[int, ...] = ()
    stopped: bool = False

    @property
    def occupied(self) -> tuple[int, ...]:
        return tuple(i for i, seat in enumerate(self.seats) if seat.occupied)


def new_table(options: Options, seat_count: int | None = None) -> GameState:
    """An empty table in the lobby with ``seat_count`` seats (the preset's most by default)."""
    count = seat_count if seat_count is not None else options.max_players
    if not MIN_TO_PLAY <= count <= options.max_players:
        raise OptionError(
            f"a {options.preset} table has {MIN_TO_PLAY} to {options.max_players} seats, "
            f"not {count}"
        )
    return GameState(options=options, seats=(Seat(),) * count, scores=(0,) * count)


# --------------------------------------------------------------------------- deal order
def deal_order(game: GameState) -> tuple[int, ...]:
    """The seats in the order they receive cards for the next round (DEAL.md).

    ``seat_order``: from seat 0 upwards. ``bottom_first``: in round 1 seat
    order, later the lowest-placed of the last round first, and upwards.
    ``discard``: seat order; the cards that do not divide evenly are set aside.
    """
    players = game.occupied
    standings = _carried_standings(game, players)
    if game.options.deal_extras == "bottom_first" and standings:
        return tuple(reversed(standings))
    return players


def hand_size(game: GameState) -> int | None:
    """The hand-size limit of the deal: only when the extras are set aside."""
    if game.options.deal_extras != "discard":
        return None
    deck = DECK_WITH_JOKERS_SIZE if game.options.jokers else STANDARD_DECK_SIZE
    return deck // len(game.occupied)


def _carried_standings(game: GameState, players: Sequence[int]) -> tuple[int, ...]:
    """Last round's standings, when the same players play again (else none)."""
    if game.round_no == 0 or sorted(game.standings) != sorted(players):
        kept = tuple(seat for seat in game.standings if seat in players)
        return kept if len(kept) == len(players) and kept else ()
    return game.standings


# --------------------------------------------------------------------------- decide
def decide(game: GameState, command: GameCommand | rnd.Command) -> list[GameEvent]:
    """The events a command causes, or :class:`Rejected` saying why it is refused."""
    try:
        handler = _DECIDE[type(command)]
    except KeyError:
        raise TypeError(f"not a game command: {command!r}") from None
    return handler(game, command)


def _decide_start(game: GameState, command: StartGame) -> list[GameEvent]:
    if game.phase != GamePhase.LOBBY:
        raise Rejected(ErrorCode.WRONG_PHASE, "a game is already under way")
    check_player_count(game.options, len(game.occupied))
    return [GameStarted(game.game_no + 1, game.occupied)]


def _decide_next_round(game: GameState, command: NextRound) -> list[GameEvent]:
    if game.phase != GamePhase.BETWEEN_ROUNDS:
        raise Rejected(ErrorCode.WRONG_PHASE, "the next round starts only between rounds")
    return _seat_changes(game)


def _decide_end(game: GameState, command: EndGame) -> list[GameEvent]:
    if game.phase not in (GamePhase.BETWEEN_ROUNDS, GamePhase.DEALING):
        raise Rejected(ErrorCode.WRONG_PHASE, "the game can be ended only between rounds")
    if game.options.game_end == "unlimited":
        best = max(game.scores[s] for s in game.occupied)
        return [GameEnded(tuple(s for s in game.occupied if game.scores[s] == best), False)]
    return [GameEnded((), True)]


def _decide_play_again(game: GameState, command: PlayAgain) -> list[GameEvent]:
    if game.phase != GamePhase.GAME_OVER:
        raise Rejected(ErrorCode.WRONG_PHASE, "play again is offered once a game is over")
    check_player_count(game.options, len(game.occupied))
    return [GameStarted(game.game_no + 1, game.occupied)]


def _decide_back_to_lobby(game: GameState, command: BackToLobby) -> list[GameEvent]:
    if game.phase != GamePhase.GAME_OVER:
        raise Rejected(ErrorCode.WRONG_PHASE, "the table goes back to the lobby after a game")
    return [ReturnedToLobby()]


def _decide_round(game: GameState, command: rnd.Command) -> list[GameEvent]:
    if game.phase != GamePhase.ROUND or game.round is None:
        raise Rejected(ErrorCode.WRONG_PHASE, "no round is being played at this table")
    events: list[GameEvent] = list(rnd.decide(game.round, command))
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
    if any(seat.player == command.player for seat in game.seats):
        raise Rejected(ErrorCode.ALREADY_SEATED, f"{command.player} already has a seat here")
    name = command.display_name.strip() or command.player
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
    standings = _carried_standings(game, players)
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


# --------------------------------------------------------------------------- evolve
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
        game, phase=GamePhase.ROUND, round_no=event.round_no, round=rnd.initial_state(event)
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
    return _set_seat(
        game, event.seat, Seat(event.player, event.is_bot, display_name=event.display_name)
    )


def _evolve_seat_left(game: GameState, event: SeatLeft) -> GameState:
    return _set_seat(game, event.seat, replace(game.seats[event.seat], leaving=True))


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
    )


def _evolve_game_ended(game: GameState, event: GameEnded) -> GameState:
    return replace(game, phase=GamePhase.GAME_OVER, winners=event.winners, stopped=event.stopped)


def _evolve_interrupted(game: GameState, event: GameInterrupted) -> GameState:
    return replace(game, phase=GamePhase.GAME_OVER, stopped=True)


def _evolve_back_in_lobby(game: GameState, event: ReturnedToLobby) -> GameState:
    return replace(game, phase=GamePhase.LOBBY, round=None, round_no=0, standings=())


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
            game = replace(game, round=round_state)
            round_changed = False
        game = evolve(game, event)
        round_state = game.round
    return replace(game, round=round_state) if round_changed else game


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


def bot_seats(game: GameState) -> list[int]:
    """Seats a bot plays now: bot players, and players who left mid-round."""
    return [i for i, seat in enumerate(game.seats) if seat.bot_plays]


def describe_game_event(event: GameEvent, seat_names: list[str]) -> str | None:
    """A sentence for the game-level events (round events: see render)."""

    def who(seat: int) -> str:
        return seat_names[seat] if seat < len(seat_names) else f"Seat {seat}"

    if isinstance(event, SeatTaken):
        return f"{event.player} sits at seat {event.seat}{' (bot)' if event.is_bot else ''}."
    if isinstance(event, SeatLeft):
        verb = "was removed" if event.removed else "left"
        return f"{event.player} {verb}; a bot finishes the round for them."
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
