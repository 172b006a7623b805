"""Scoring's read models and how each event changes them. Pure: no database here.

The engine has already computed every point, total, standing and winner;
these models only record what the events say:

- per table: the current (or last) game's number, rounds finished, totals by
  seat, the last round's standings, who sits where and who played the last round;
- per finished game: winners (and their player ids), stopped, totals, rounds;
- per player: rounds finished and won, games finished and won (joint wins
  count), points, and how often each place was taken.

A game that is interrupted (too few players left) is recorded as stopped.
Every player id seen at a table is counted, bots included.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from president.hosting.events import TableCreated, TableEvent
from president.rules import game as g
from president.rules import round as rnd


@dataclass(frozen=True)
class TableModel:
    """A table's standings: what GetStandings answers."""

    table_id: str
    game_no: int = 0
    rounds_played: int = 0
    totals: tuple[int, ...] = ()
    last_standings: tuple[int, ...] = ()
    seated: tuple[str, ...] = ()
    last_round: tuple[str, ...] = ()
    version: int = 0

    def player_at(self, seat: int) -> str:
        """Who played ``seat`` in the last round, else who sits there now."""
        if seat < len(self.last_round) and self.last_round[seat]:
            return self.last_round[seat]
        return self.seated[seat] if seat < len(self.seated) else ""

    def place_of(self, seat: int) -> int:
        """The seat's place in the last round, from 1; 0 when it did not play it."""
        return self.last_standings.index(seat) + 1 if seat in self.last_standings else 0


@dataclass(frozen=True)
class GameRecord:
    """A finished game: what GetGameResults lists."""

    table_id: str
    game_no: int
    winners: tuple[int, ...]
    winner_player_ids: tuple[str, ...]
    stopped: bool
    totals: tuple[int, ...]
    rounds: int


@dataclass(frozen=True)
class PlayerDelta:
    """What one event adds to a player's statistics."""

    player_id: str
    rounds_played: int = 0
    rounds_won: int = 0
    games_played: int = 0
    games_won: int = 0
    points: int = 0
    place: int | None = None  # 0 = first


@dataclass(frozen=True)
class PlayerStats:
    """A player's statistics: what GetPlayerStats answers."""

    player_id: str
    rounds_played: int = 0
    rounds_won: int = 0
    games_played: int = 0
    games_won: int = 0
    points: int = 0
    places: tuple[int, ...] = ()

    def without(self, share: PlayerStats) -> PlayerStats:
        """These statistics less ``share`` (what one table added to them)."""
        places = [
            mine - (share.places[index] if index < len(share.places) else 0)
            for index, mine in enumerate(self.places)
        ]
        while places and places[-1] == 0:
            places.pop()
        return PlayerStats(
            player_id=self.player_id,
            rounds_played=self.rounds_played - share.rounds_played,
            rounds_won=self.rounds_won - share.rounds_won,
            games_played=self.games_played - share.games_played,
            games_won=self.games_won - share.games_won,
            points=self.points - share.points,
            places=tuple(places),
        )

    def add(self, delta: PlayerDelta) -> PlayerStats:
        places = list(self.places)
        if delta.place is not None:
            places.extend([0] * (delta.place + 1 - len(places)))
            places[delta.place] += 1
        return PlayerStats(
            player_id=self.player_id,
            rounds_played=self.rounds_played + delta.rounds_played,
            rounds_won=self.rounds_won + delta.rounds_won,
            games_played=self.games_played + delta.games_played,
            games_won=self.games_won + delta.games_won,
            points=self.points + delta.points,
            places=tuple(places),
        )


@dataclass(frozen=True)
class Change:
    """What one event does to the read models."""

    table: TableModel
    game: GameRecord | None = None
    players: tuple[PlayerDelta, ...] = field(default=())


def _set(values: Sequence[str], index: int, value: str) -> tuple[str, ...]:
    out = list(values)
    out.extend([""] * (index + 1 - len(out)))
    out[index] = value
    return tuple(out)


def created(event: TableCreated, table_id: str) -> TableModel:
    """The models of a new table."""
    seats = event.seat_count
    return TableModel(
        table_id=table_id,
        totals=(0,) * seats,
        seated=("",) * seats,
        last_round=("",) * seats,
        version=1,
    )


def project(model: TableModel, event: TableEvent, version: int) -> Change:
    """The read models after one more event of the table (``version`` is the event's)."""
    table = replace(model, version=version)
    if isinstance(event, g.SeatTaken):
        table = replace(table, seated=_set(table.seated, event.seat, event.player))
        return Change(table, players=(PlayerDelta(event.player),))
    if isinstance(event, g.SeatFreed):
        return Change(replace(table, seated=_set(table.seated, event.seat, "")))
    if isinstance(event, g.GameStarted):
        return Change(
            replace(
                table,
                game_no=event.game_no,
                rounds_played=0,
                totals=(0,) * len(table.seated),
                last_standings=(),
                last_round=("",) * len(table.seated),
            )
        )
    if isinstance(event, g.SeatsChanged):
        moved = event.moved_from
        where = {old: new for new, old in enumerate(moved)}

        def permute(values: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(values[old] if old < len(values) else "" for old in moved)

        return Change(
            replace(
                table,
                seated=permute(table.seated),
                last_round=permute(table.last_round),
                totals=tuple(table.totals[old] for old in moved),
                last_standings=tuple(where[seat] for seat in table.last_standings),
            )
        )
    if isinstance(event, rnd.RoundEnded):
        last_round = tuple(
            table.seated[seat] if seat in event.standings else ""
            for seat in range(len(table.seated))
        )
        table = replace(
            table,
            rounds_played=table.rounds_played + 1,
            totals=event.totals,
            last_standings=event.standings,
            last_round=last_round,
        )
        deltas = tuple(
            PlayerDelta(
                last_round[seat],
                rounds_played=1,
                rounds_won=1 if place == 0 else 0,
                points=event.points[seat],
                place=place,
            )
            for place, seat in enumerate(event.standings)
            if last_round[seat]
        )
        return Change(table, players=deltas)
    if isinstance(event, g.GameEnded):
        return _game_over(table, event.winners, event.stopped)
    if isinstance(event, g.GameInterrupted):
        return _game_over(table, (), True)
    return Change(table)


def _game_over(table: TableModel, winners: tuple[int, ...], stopped: bool) -> Change:
    record = GameRecord(
        table_id=table.table_id,
        game_no=table.game_no,
        winners=winners,
        winner_player_ids=tuple(table.player_at(seat) for seat in winners),
        stopped=stopped,
        totals=table.totals,
        rounds=table.rounds_played,
    )
    if stopped:
        return Change(table, game=record)
    deltas = tuple(
        PlayerDelta(table.player_at(seat), games_played=1, games_won=1 if seat in winners else 0)
        for seat in range(len(table.seated))
        if table.player_at(seat)
    )
    return Change(table, game=record, players=deltas)
