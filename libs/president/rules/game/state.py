"""The state of a table: its phase, its seats and the round under way."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from president.rules import round as rnd
from president.rules.options import OptionError, Options, count_range

MIN_TO_PLAY = 3


class GamePhase(StrEnum):
    """Where a table is; the values are the strings the wire and the store carry."""

    LOBBY = "lobby"
    DEALING = "dealing"
    ROUND = "round"
    BETWEEN_ROUNDS = "between_rounds"
    GAME_OVER = "game_over"


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
    #: Players who left (or were removed) during the game under way: rulebook 000's
    #: "you cannot reclaim that seat during the game". Empty outside a game.
    departed: frozenset[str] = frozenset()
    #: Seats taken between rounds since the last deal: they start with no role and no
    #: score, and the next round starts like round 1 (no exchange).
    newcomers: frozenset[int] = frozenset()

    @property
    def occupied(self) -> tuple[int, ...]:
        return tuple(i for i, seat in enumerate(self.seats) if seat.occupied)


#: The phases of a game under way, from its start to its end.
IN_GAME = frozenset({GamePhase.DEALING, GamePhase.ROUND, GamePhase.BETWEEN_ROUNDS})


def new_table(options: Options, seat_count: int | None = None) -> GameState:
    """An empty table in the lobby with ``seat_count`` seats (the preset's most by default)."""
    count = seat_count if seat_count is not None else options.max_players
    low = max(MIN_TO_PLAY, options.min_players)
    if not low <= count <= options.max_players:
        raise OptionError(
            f"a {options.preset} table has {count_range(low, options.max_players)} seats, "
            f"not {count}"
        )
    return GameState(options=options, seats=(Seat(),) * count, scores=(0,) * count)


def bot_seats(game: GameState) -> list[int]:
    """Seats a bot plays now: bot players, and players who left mid-round."""
    return [i for i, seat in enumerate(game.seats) if seat.bot_plays]
