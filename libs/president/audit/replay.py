"""A table's stored log folded event by event, for reading it back (``audit replay``).

No checks: verify the log first (:func:`president.audit.verify_table`) and
replay the part that verifies.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from president.audit.commands import decode
from president.hosting.events import TableEvent
from president.hosting.projection import Table, fold_next
from president.rules import game as g
from president.store import StoredEvent


@dataclass(frozen=True)
class ReplayedEvent:
    """One stored event of a replay, decoded, with the table after it."""

    stored: StoredEvent
    event: TableEvent
    game: g.GameState


def replay_events(events: Sequence[StoredEvent]) -> Iterator[ReplayedEvent]:
    """Decode and fold a table's events in order (no checks: verify the log first).

    The log begins with ``TableCreated``, as a verified one does; ValueError if not.
    """
    table: Table | None = None
    for stored in events:
        event = decode(stored)
        table = fold_next(table, event, stored)
        yield ReplayedEvent(stored, event, table.game)


def seat_names(game: g.GameState) -> list[str]:
    """A name for each seat: the display name, else the player id, else ``Seat N``."""
    return [
        seat.display_name or seat.player or f"Seat {index}" for index, seat in enumerate(game.seats)
    ]
