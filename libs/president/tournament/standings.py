"""Tournament standings, recomputed from the tables' results alone, with stated tie-breaks.

Swiss, best first by:

1. points (:func:`president.tournament.scoring.place_points`, summed over rounds);
2. opponents' points: the sum, over every round played, of the points of the
   entrants who shared the table (a Buchholz score);
3. best places: more first places, then more second places, and so on;
4. the draw order: where the committed draw first seated the entrant (round,
   table, seat); entrants never seated come last, in the order they entered.

Elimination, best first by the last round reached, then the place in that
round, then as Swiss. An entrant scores a round only if they had not retired
before their table's result (:class:`president.tournament.events.EntrantRetired`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from president.tournament.scoring import place_points
from president.tournament.state import Tournament


@dataclass(frozen=True)
class Standing:
    """Where one entrant stands: their rank (1 first) and what it was decided on."""

    rank: int
    account_id: str
    points: int
    opponents_points: int
    #: How many times the entrant finished 1st, 2nd, ... (table_size places).
    place_counts: tuple[int, ...]
    rounds_scored: int
    #: The last round the entrant was seated in (0: none yet).
    reached: int
    retired: bool


@dataclass(frozen=True)
class Appearance:
    """An entrant seated at a table of a round, and whether that table's place counts for them."""

    round_no: int
    table: int
    seat: int
    account_id: str
    seats: int
    place: int | None
    others: tuple[str, ...]


def appearances(state: Tournament) -> Iterator[Appearance]:
    """Every entrant's seat in every seated round, with the place it scored (None:
    the table plays on, or the entrant had retired before its result)."""
    retired_from = {e.account_id: e.retired_from for e in state.entrants}
    for record in state.rounds:
        for t, table in enumerate(record.seating or ()):
            places = record.places[t]
            for seat, account in enumerate(table):
                if account is None:
                    continue
                since = retired_from.get(account)
                counts = places is not None and (since is None or record.round_no < since)
                yield Appearance(
                    record.round_no,
                    t,
                    seat,
                    account,
                    len(table),
                    places[seat] if counts and places is not None else None,
                    tuple(a for a in table if a is not None and a != account),
                )


def points_by_entrant(state: Tournament) -> dict[str, int]:
    """Every entrant's points so far."""
    points = {e.account_id: 0 for e in state.entrants}
    for seen in appearances(state):
        if seen.place is not None:
            points[seen.account_id] = points.get(seen.account_id, 0) + place_points(
                seen.place, seen.seats
            )
    return points


def standings(state: Tournament) -> tuple[Standing, ...]:
    """Every entrant, best first, by the format's order (this module's docstring)."""
    points = points_by_entrant(state)
    width = state.settings.table_size
    opponents: dict[str, int] = defaultdict(int)
    counts: dict[str, list[int]] = {e.account_id: [0] * width for e in state.entrants}
    scored: dict[str, int] = defaultdict(int)
    reached: dict[str, int] = defaultdict(int)
    last_place: dict[str, int] = {}
    drawn: dict[str, tuple[int, int, int]] = {}
    for seen in appearances(state):
        account = seen.account_id
        drawn.setdefault(account, (seen.round_no, seen.table, seen.seat))
        reached[account] = seen.round_no
        last_place[account] = seen.place if seen.place is not None else width + 1
        if seen.place is None:
            continue
        scored[account] += 1
        opponents[account] += sum(points.get(other, 0) for other in seen.others)
        if seen.place <= width:
            counts[account][seen.place - 1] += 1
    unseated = len(state.rounds) + 1
    order = {e.account_id: (unseated, i, 0) for i, e in enumerate(state.entrants)}
    order.update(drawn)
    elimination = state.settings.format == "elimination"

    def key(account: str) -> tuple[object, ...]:
        swiss = (
            -points[account],
            -opponents[account],
            tuple(-c for c in counts[account]),
            order[account],
        )
        if elimination:
            return (-reached[account], last_place.get(account, width + 1), *swiss)
        return swiss

    retired = {e.account_id for e in state.entrants if e.retired}
    ranked = sorted((e.account_id for e in state.entrants), key=key)
    return tuple(
        Standing(
            rank,
            account,
            points[account],
            opponents[account],
            tuple(counts[account]),
            scored[account],
            reached[account],
            account in retired,
        )
        for rank, account in enumerate(ranked, start=1)
    )
