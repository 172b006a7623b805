"""The state of a tournament, and ``evolve``: its events folded in, one handler per type."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from president.tournament.commands import TournamentSettings
from president.tournament.events import (
    Entered,
    EntrantRetired,
    EntrantsInvited,
    EntryWithdrawn,
    RoundDrawCommitted,
    RoundRevealed,
    RoundSeated,
    TableResultRecorded,
    TableSettled,
    TournamentCancelled,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
)
from president.tournament.port import DrawRequest, Seating


class Status(StrEnum):
    """Where a tournament is: taking entries, playing rounds, or over."""

    ENTRY = "entry"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class Entrant:
    """An account in the tournament; ``retired_from``: the first round it scores nothing in."""

    account_id: str
    guest: bool
    rating_milli: int
    retired_from: int | None = None

    @property
    def retired(self) -> bool:
        return self.retired_from is not None


@dataclass(frozen=True)
class RoundRecord:
    """One round: its committed draw, its seating, each table's places, and the secret."""

    round_no: int
    fingerprint: str
    request: DrawRequest
    seating: Seating | None = None
    #: Per table: each seat's place, or None while the table plays.
    places: tuple[tuple[int, ...] | None, ...] = ()
    settled: frozenset[int] = frozenset()
    secret: bytes | None = None

    @property
    def scored(self) -> bool:
        """Every table of the seated round has its places."""
        return self.seating is not None and all(p is not None for p in self.places)


@dataclass(frozen=True)
class Tournament:
    """A tournament as its events made it."""

    tournament_id: str
    host: str
    settings: TournamentSettings
    status: Status = Status.ENTRY
    invited: frozenset[str] = frozenset()
    #: In the order they entered.
    entrants: tuple[Entrant, ...] = ()
    rounds: tuple[RoundRecord, ...] = ()
    ranking: tuple[str, ...] = ()

    def entrant(self, account_id: str) -> Entrant | None:
        """The entry of ``account_id``, if it holds one."""
        return next((e for e in self.entrants if e.account_id == account_id), None)

    @property
    def started(self) -> bool:
        return bool(self.rounds)

    @property
    def over(self) -> bool:
        return self.status in (Status.FINISHED, Status.CANCELLED)


def evolve(state: Tournament | None, event: TournamentEvent) -> Tournament:
    """Fold one event into the tournament (``None``: before it was created)."""
    if isinstance(event, TournamentCreated):
        return Tournament(event.tournament_id, event.host, event.settings)
    assert state is not None, f"{event!r} before the tournament was created"
    handler = _EVOLVE[type(event)]
    folded: Tournament = handler(state, event)
    return folded


def fold(events: Iterable[TournamentEvent], state: Tournament | None = None) -> Tournament | None:
    """The tournament after ``events``, in order."""
    for event in events:
        state = evolve(state, event)
    return state


def _invited(state: Tournament, event: EntrantsInvited) -> Tournament:
    return replace(state, invited=state.invited | frozenset(event.accounts))


def _cancelled(state: Tournament, event: TournamentCancelled) -> Tournament:
    return replace(state, status=Status.CANCELLED)


def _entered(state: Tournament, event: Entered) -> Tournament:
    entrant = Entrant(event.account_id, event.guest, event.rating_milli)
    return replace(state, entrants=(*state.entrants, entrant))


def _withdrawn(state: Tournament, event: EntryWithdrawn) -> Tournament:
    kept = tuple(e for e in state.entrants if e.account_id != event.account_id)
    return replace(state, entrants=kept)


def _retired(state: Tournament, event: EntrantRetired) -> Tournament:
    entrants = tuple(
        replace(e, retired_from=event.from_round) if e.account_id == event.account_id else e
        for e in state.entrants
    )
    return replace(state, entrants=entrants)


def _committed(state: Tournament, event: RoundDrawCommitted) -> Tournament:
    record = RoundRecord(event.round_no, event.fingerprint, event.request)
    return replace(state, status=Status.RUNNING, rounds=(*state.rounds, record))


def _with_last_round(state: Tournament, record: RoundRecord) -> Tournament:
    return replace(state, rounds=(*state.rounds[:-1], record))


def _seated(state: Tournament, event: RoundSeated) -> Tournament:
    record = replace(state.rounds[-1], seating=event.seating, places=(None,) * len(event.seating))
    return _with_last_round(state, record)


def _placed(record: RoundRecord, table: int, places: tuple[int, ...]) -> RoundRecord:
    return replace(record, places=(*record.places[:table], places, *record.places[table + 1 :]))


def _recorded(state: Tournament, event: TableResultRecorded) -> Tournament:
    return _with_last_round(state, _placed(state.rounds[-1], event.table, event.places))


def _settled(state: Tournament, event: TableSettled) -> Tournament:
    record = _placed(state.rounds[-1], event.table, event.places)
    return _with_last_round(state, replace(record, settled=record.settled | {event.table}))


def _revealed(state: Tournament, event: RoundRevealed) -> Tournament:
    return _with_last_round(state, replace(state.rounds[-1], secret=event.secret))


def _finished(state: Tournament, event: TournamentFinished) -> Tournament:
    return replace(state, status=Status.FINISHED, ranking=event.ranking)


_EVOLVE: dict[type, Callable[[Tournament, Any], Tournament]] = {
    EntrantsInvited: _invited,
    TournamentCancelled: _cancelled,
    Entered: _entered,
    EntryWithdrawn: _withdrawn,
    EntrantRetired: _retired,
    RoundDrawCommitted: _committed,
    RoundSeated: _seated,
    TableResultRecorded: _recorded,
    TableSettled: _settled,
    RoundRevealed: _revealed,
    TournamentFinished: _finished,
}
