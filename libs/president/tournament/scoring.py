"""A table's game in tournament terms: points per place, who advances, and the settle rule.

- **Points.** At a table of ``n`` seats, place ``p`` (1 first) scores ``n - p``:
  at 4 seats 3/2/1/0, at 5 seats 4/3/2/1/0. Bots take places but score for nobody.
- **Advancing (elimination).** At a table of ``n`` seats the best ``n // 2``
  (at least 1) entrants advance: 2 of 4 or 5, 3 of 6 or 7, 1 of 3. Bots and
  retired entrants never advance, and the next best entrant takes their place.
- **The settle rule.** A table that fell under its preset's minimum players
  cannot finish. The players still seated take the first places, ranked as the
  table's totals stood when it stopped; the players who left take the places
  after them, in the same order.
"""

from __future__ import annotations

from collections.abc import Collection


def place_points(place: int, seats: int) -> int:
    """The points of ``place`` (1 first) at a table of ``seats`` seats."""
    return seats - place


def advancing_count(seats: int) -> int:
    """How many entrants of a table of ``seats`` seats advance in an elimination."""
    return max(1, seats // 2)


def advancing(
    table: tuple[str | None, ...], places: tuple[int, ...], out: Collection[str]
) -> tuple[str, ...]:
    """The entrants who advance from ``table`` (best first), none of ``out`` (retired)."""
    ranked = sorted(range(len(table)), key=lambda seat: places[seat])
    entrants = [table[s] for s in ranked if table[s] is not None and table[s] not in out]
    return tuple(a for a in entrants if a is not None)[: advancing_count(len(table))]


def settled_places(standing: tuple[int, ...], departed: Collection[int]) -> tuple[int, ...]:
    """Each seat's place by the settle rule: still seated first, then the departed,
    each in the order of ``standing`` (every seat, best first)."""
    order = [s for s in standing if s not in departed] + [s for s in standing if s in departed]
    places = [0] * len(standing)
    for place, seat in enumerate(order, start=1):
        places[seat] = place
    return tuple(places)
