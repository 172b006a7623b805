"""The seat draw as the tournament core sees it: a port.

The committed seat draw itself (its secret, fingerprint, algorithm, and the
shape of what it seats: ``DrawEntrant``, ``DrawRequest``, ``Seating``) is
:mod:`president.tournament.draw`; the core takes any draw of that shape, so
its tests may seat rounds with a fake, and the service with the real one
(:class:`CommittedDraw`).
"""

from __future__ import annotations

from typing import Protocol

from president.tournament import draw as committed
from president.tournament.draw import DrawEntrant, DrawRequest, Seating

__all__ = ["CommittedDraw", "DrawEntrant", "DrawRequest", "SeatDraw", "Seating"]


class SeatDraw(Protocol):
    """The committed seat draw: the same secret and request always give the same seating."""

    def draw(self, secret: bytes, request: DrawRequest) -> Seating:
        """Every entrant of ``request`` seated once, at tables of ``request.table_size``."""
        ...


class CommittedDraw:
    """SEAT_DRAW.md's draw (:func:`president.tournament.draw.draw`) behind the port."""

    def draw(self, secret: bytes, request: DrawRequest) -> Seating:
        return committed.draw(secret, request)
