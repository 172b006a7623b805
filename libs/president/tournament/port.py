"""The seat draw as the tournament core sees it: a port, and the shape of what it draws.

The committed seat draw itself (its secret, fingerprint and algorithm) is
``president.tournament.draw``; these names are the ones it defines, so the core
takes any draw of that shape: a module with ``draw(secret, request)`` is one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

#: The ways a round is drawn: at random, by rating bands (the first round), or
#: Swiss (later rounds: like points together, no repeat co-seatings where avoidable).
DRAW_METHODS = ("random", "rating_bands", "swiss")

#: Tables, in order; each a tuple of seats, in order: an entrant's account, or None for a bot.
Seating = tuple[tuple[str | None, ...], ...]


@dataclass(frozen=True)
class DrawEntrant:
    """One entrant to seat: their account, points so far, and rating (thousandths)."""

    account_id: str
    points: int
    rating_milli: int


@dataclass(frozen=True)
class DrawRequest:
    """What a round's draw seats: who, at tables of how many, by which method.

    ``met_before`` holds each pair of entrants who shared a table in an earlier round.
    """

    tournament_id: str
    round: int
    method: str
    table_size: int
    entrants: tuple[DrawEntrant, ...]
    met_before: frozenset[frozenset[str]]


class SeatDraw(Protocol):
    """The committed seat draw: the same secret and request always give the same seating."""

    def draw(self, secret: bytes, request: DrawRequest) -> Seating:
        """Every entrant of ``request`` seated once, at tables of ``request.table_size``."""
        ...
