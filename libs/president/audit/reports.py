"""What the audit reports: the first bad event, each round's status, a table's and many tables'.

:class:`Found` is how a check stops the walk at the first bad event; the walk
(:mod:`president.audit.verify`) catches it and puts its :class:`Discrepancy`
in the :class:`TableReport`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from president.hosting.streams import table_id_of
from president.store import StoredEvent

VERIFIED = "verified"
"""Round status: dealt from its committed secret, every command checked, secret revealed."""
IN_PROGRESS = "in progress"
"""Round status: the last round of the log, its secret not revealed yet."""
FAILED = "failed"
"""Round status: the round in which the first bad event is."""
SECRET_LOST = "secret lost"
"""Round status: the operator lost the round's secret (``DealSecretLost``): its deal can
never be checked. A finding against the operator, never a pass."""
WITHDRAWN = "withdrawn"
"""Round status: the operator lost a committed round's secret before its deal
(``DealSecretLost`` before ``RoundStarted``): that commitment was withdrawn and the round
committed afresh, reported again under its new commitment. A finding, never a pass."""


def short_type(type_name: str) -> str:
    """``president.events.v1.CardsPlayed`` -> ``CardsPlayed``."""
    return type_name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Discrepancy:
    """The first bad event of a stream and what is wrong with it, in words."""

    stream_id: str
    version: int
    event_type: str
    reason: str

    def __str__(self) -> str:
        return f"{self.stream_id} version {self.version} ({self.event_type}): {self.reason}"


class Found(Exception):
    """The first bad event (raised by a check, caught by ``verify_table``)."""

    def __init__(self, event: StoredEvent, reason: str) -> None:
        super().__init__(reason)
        self.discrepancy = Discrepancy(
            event.stream_id, event.version, short_type(event.type), reason
        )


@dataclass(frozen=True)
class RoundReport:
    """One round of a table as the audit found it."""

    game_no: int
    round_no: int
    fingerprint: str
    status: str
    committed_at: int
    """Version of the ``DealCommitted`` event."""
    dealt_at: int | None = None
    """Version of the ``RoundStarted`` event (None: not dealt yet)."""
    ended_at: int | None = None
    """Version of the ``RoundEnded`` event (None: still being played)."""
    revealed_at: int | None = None
    """Version of the ``DealRevealed`` event (None: not revealed yet)."""
    secret_hex: str | None = None
    lost_at: int | None = None
    """Version of the ``DealSecretLost`` event (None: not lost)."""


@dataclass(frozen=True)
class TableReport:
    """What :func:`president.audit.verify_table` found for one table's stream."""

    stream_id: str
    events: int
    """Events in the stream."""
    events_verified: int
    """Events checked and found good, before the first bad one (all when ``ok``)."""
    rounds: tuple[RoundReport, ...]
    games: int
    problem: Discrepancy | None = None
    warnings: tuple[str, ...] = ()
    """What is not wrong yet but should not last (a round that ended and awaits its reveal)."""

    @property
    def table_id(self) -> str:
        """The table's id (the stream id without ``table-``)."""
        return table_id_of(self.stream_id)

    @property
    def ok(self) -> bool:
        """True when every event verified."""
        return self.problem is None

    @property
    def rounds_verified(self) -> int:
        """Rounds dealt from their committed secret, fully checked and revealed."""
        return sum(1 for item in self.rounds if item.status == VERIFIED)

    @property
    def rounds_in_progress(self) -> int:
        """Rounds not revealed yet (only ever the last one of a good log)."""
        return sum(1 for item in self.rounds if item.status == IN_PROGRESS)


@dataclass(frozen=True)
class AuditSummary:
    """Totals over many tables, and the first bad event among them."""

    tables: int
    tables_ok: int
    rounds_verified: int
    rounds_in_progress: int
    events: int
    events_verified: int
    first_problem: Discrepancy | None

    @property
    def ok(self) -> bool:
        """True when every table verified."""
        return self.first_problem is None


def summarise(reports: Sequence[TableReport]) -> AuditSummary:
    """Add up table reports; the first problem is that of the first bad table given."""
    return AuditSummary(
        tables=len(reports),
        tables_ok=sum(1 for report in reports if report.ok),
        rounds_verified=sum(report.rounds_verified for report in reports),
        rounds_in_progress=sum(report.rounds_in_progress for report in reports),
        events=sum(report.events for report in reports),
        events_verified=sum(report.events_verified for report in reports),
        first_problem=next((r.problem for r in reports if r.problem is not None), None),
    )
