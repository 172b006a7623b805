"""The events of a tournament: what happened, in the past tense, as its stream keeps it."""

from __future__ import annotations

from dataclasses import dataclass

from president.tournament.commands import TournamentSettings
from president.tournament.port import DrawRequest, Seating


@dataclass(frozen=True)
class TournamentCreated:
    tournament_id: str
    host: str
    settings: TournamentSettings


@dataclass(frozen=True)
class EntrantsInvited:
    accounts: tuple[str, ...]


@dataclass(frozen=True)
class TournamentCancelled:
    pass


@dataclass(frozen=True)
class Entered:
    account_id: str
    guest: bool
    rating_milli: int


@dataclass(frozen=True)
class EntryWithdrawn:
    account_id: str


@dataclass(frozen=True)
class EntrantRetired:
    """``account_id`` scores nothing from round ``from_round`` on (a bot plays their seat)."""

    account_id: str
    from_round: int


@dataclass(frozen=True)
class RoundDrawCommitted:
    """Round ``round_no`` will be drawn from a secret of this fingerprint, for ``request``."""

    round_no: int
    fingerprint: str
    request: DrawRequest


@dataclass(frozen=True)
class RoundSeated:
    round_no: int
    seating: Seating


@dataclass(frozen=True)
class TableResultRecorded:
    """``places[seat]``: each seat's place (1 first) in the table's game."""

    round_no: int
    table: int
    places: tuple[int, ...]


@dataclass(frozen=True)
class TableSettled:
    """The table could not finish; ``places`` are by the settle rule (see scoring)."""

    round_no: int
    table: int
    places: tuple[int, ...]
    departed: frozenset[int]


@dataclass(frozen=True)
class RoundRevealed:
    round_no: int
    secret: bytes


@dataclass(frozen=True)
class TournamentFinished:
    """The final standings: accounts, first place first."""

    ranking: tuple[str, ...]


TournamentEvent = (
    TournamentCreated
    | EntrantsInvited
    | TournamentCancelled
    | Entered
    | EntryWithdrawn
    | EntrantRetired
    | RoundDrawCommitted
    | RoundSeated
    | TableResultRecorded
    | TableSettled
    | RoundRevealed
    | TournamentFinished
)
