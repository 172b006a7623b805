"""Presence: which seats have their person connected, and who reports it.

A seat is connected while at least one gateway replica reports a stream of its
owner open (``SeatPresence`` events, folded into ``Table.presence`` as
``(seat, gateway)`` pairs). A seat's presence ends with its occupant: a seat
taken, left or freed starts with nobody connected.

Pure: the projection folds these, the deadline rules read them
(:mod:`president.hosting.deadlines`, the ``takeover`` timer).
"""

from __future__ import annotations

#: A seat reported connected by one gateway replica.
Present = frozenset[tuple[int, str]]


def with_presence(present: Present, seat: int, gateway: str, connected: bool) -> Present:
    """``present`` after ``gateway`` reported ``seat`` connected or not."""
    pair = (seat, gateway)
    return present | {pair} if connected else present - {pair}


def without_seat(present: Present, seat: int) -> Present:
    """``present`` with nobody connected at ``seat`` (its occupant changed)."""
    return frozenset(pair for pair in present if pair[0] != seat)


def connected_seats(present: Present) -> frozenset[int]:
    """The seats some gateway replica reports connected."""
    return frozenset(seat for seat, _gateway in present)


def moved(present: Present, moved_from: tuple[int, ...]) -> Present:
    """``present`` after the seats changed: new seat ``i`` holds old seat ``moved_from[i]``'s
    person."""
    return frozenset(
        (new, gateway)
        for new, old in enumerate(moved_from)
        for seat, gateway in present
        if seat == old
    )
