"""The commands of a tournament: what its host, its entrants and the server ask of it.

Every command names its ``actor``: an account, :data:`OPERATOR` (who may do
what any host may), or :data:`SERVER` (the tournament service, which alone
runs the rounds). Who an account is (a guest or not, its rating) is said by the
service's edge and carried in the command, as times and secrets are.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from president.tournament.port import Seating

#: The tournament service itself: it commits, seats, records, reveals and finishes.
SERVER = "server"
#: The operator of the site: may create and change any tournament, as its host may.
OPERATOR = "operator"

#: The formats: Swiss rounds of tables, or elimination with the top of each table advancing.
FORMATS = ("swiss", "elimination")
#: How a tournament's first round is drawn (and every round of an elimination).
FIRST_DRAWS = ("random", "rating_bands")


@dataclass(frozen=True)
class TournamentSettings:
    """What a host chooses when creating a tournament.

    The entry window is ``[opens_at, closes_at)``; play starts at ``starts_at``.
    A Swiss tournament's window may close after its start: whoever enters late
    is drawn from the next round on. ``options`` are the table options as
    ``name=value`` pairs, applied to ``preset`` (:func:`president.rules.options.options_for`).
    """

    name: str
    preset: str
    format: str
    rounds: int
    table_size: int
    capacity: int
    opens_at: datetime
    closes_at: datetime
    starts_at: datetime
    public: bool = True
    guests_allowed: bool = False
    first_draw: str = "random"
    options: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CreateTournament:
    """A host (or the operator) creates a tournament; ``actor`` becomes its host."""

    actor: str
    tournament_id: str
    settings: TournamentSettings


@dataclass(frozen=True)
class Invite:
    """The host invites accounts to an invite-only tournament."""

    actor: str
    accounts: tuple[str, ...]


@dataclass(frozen=True)
class CancelTournament:
    """The host calls the tournament off before its first round."""

    actor: str


@dataclass(frozen=True)
class Enter:
    """An account enters; ``guest`` and ``rating_milli`` are the edge's word for it."""

    actor: str
    guest: bool = False
    rating_milli: int = 0


@dataclass(frozen=True)
class Withdraw:
    """An entrant withdraws their entry before the first round."""

    actor: str


@dataclass(frozen=True)
class Retire:
    """An entrant leaves a tournament under way: a bot plays their seat, they score no further."""

    actor: str


@dataclass(frozen=True)
class StartRound:
    """The server commits to round ``round_no``'s draw by the fingerprint of its secret."""

    actor: str
    round_no: int
    fingerprint: str


@dataclass(frozen=True)
class SeatRound:
    """The server seats round ``round_no`` as the committed draw drew it."""

    actor: str
    round_no: int
    seating: Seating


@dataclass(frozen=True)
class RecordResult:
    """A table's game ended: ``places[seat]`` is the place (1 first) of each seat."""

    actor: str
    round_no: int
    table: int
    places: tuple[int, ...]


@dataclass(frozen=True)
class SettleTable:
    """A table fell under its preset's minimum players and cannot finish: settle it.

    ``standing`` lists every seat, best first, as the table's totals ranked them
    when it stopped; ``departed`` are the seats whose players left.
    """

    actor: str
    round_no: int
    table: int
    standing: tuple[int, ...]
    departed: frozenset[int]


@dataclass(frozen=True)
class RevealRound:
    """Every table of the round has its result: the server reveals the draw's secret."""

    actor: str
    round_no: int
    secret: bytes


@dataclass(frozen=True)
class FinishTournament:
    """The last round is revealed: the server closes the tournament with its standings."""

    actor: str


TournamentCommand = (
    CreateTournament
    | Invite
    | CancelTournament
    | Enter
    | Withdraw
    | Retire
    | StartRound
    | SeatRound
    | RecordResult
    | SettleTable
    | RevealRound
    | FinishTournament
)
