"""Standings: points per place, then opponents' points, then best places, then the draw order."""

from __future__ import annotations

from president.tournament.events import (
    Entered,
    RoundDrawCommitted,
    RoundRevealed,
    RoundSeated,
    TableResultRecorded,
    TournamentCreated,
    TournamentEvent,
)
from president.tournament.port import DrawEntrant, DrawRequest, Seating
from president.tournament.standings import standings
from president.tournament.state import Tournament, fold
from tests.support.tournaments import settings

NAMES = "abcdefgh"
Round = tuple[Seating, tuple[tuple[int, ...], ...]]


def played(*rounds: Round, format: str = "swiss") -> Tournament:
    """A tournament of entrants a..h whose rounds were seated and placed as given."""
    log: list[TournamentEvent] = [TournamentCreated("t", "h", settings(format=format))]
    log += [Entered(name, False, 0) for name in NAMES]
    everyone = tuple(DrawEntrant(name, 0, 0) for name in NAMES)
    for round_no, (seating, places) in enumerate(rounds, start=1):
        request = DrawRequest("t", round_no, "random", 4, everyone, frozenset())
        log += [RoundDrawCommitted(round_no, "f", request), RoundSeated(round_no, seating)]
        log += [TableResultRecorded(round_no, t, p) for t, p in enumerate(places)]
        log.append(RoundRevealed(round_no, b"s"))
    state = fold(log)
    assert state is not None
    return state


def test_points_then_opponents_points_then_best_places() -> None:
    state = played(
        ((("h", "e", "g", "a"), ("c", "f", "d", "b")), ((3, 4, 2, 1), (2, 1, 4, 3))),
        ((("e", "f", "c", "a"), ("d", "b", "h", "g")), ((1, 3, 2, 4), (4, 1, 2, 3))),
    )
    table = {s.account_id: s for s in standings(state)}
    # Round 1: a 3, g 2, h 1, e 0 | f 3, c 2, b 1, d 0.
    # Round 2: e 3, c 2, f 1, a 0 | b 3, h 2, g 1, d 0.
    points = {"a": 3, "b": 4, "c": 4, "d": 0, "e": 3, "f": 4, "g": 3, "h": 3}
    assert {n: table[n].points for n in NAMES} == points
    # f: (c 4 + d 0 + b 4) + (e 3 + c 4 + a 3) = 18; c: (f 4 + d 0 + b 4) + (e 3 + f 4 + a 3) = 18;
    # b: (c 4 + f 4 + d 0) + (d 0 + h 3 + g 3) = 14.
    assert (table["f"].opponents_points, table["c"].opponents_points) == (18, 18)
    assert table["b"].opponents_points == 14
    # f: a first and a third place; c: two second places. More first places first.
    assert (table["f"].place_counts, table["c"].place_counts) == ((1, 0, 1, 0), (0, 2, 0, 0))
    assert [s.account_id for s in standings(state)][:3] == ["f", "c", "b"]
    assert [s.rank for s in standings(state)] == list(range(1, 9))


def test_opponents_points_before_the_draw_order() -> None:
    # a wins a table beside a bot that came 2nd; e wins a table of four entrants.
    state = played(
        ((("a", "b", "c", None), ("e", "f", "g", "h")), ((1, 3, 4, 2), (1, 2, 3, 4))),
    )
    table = {s.account_id: s for s in standings(state)}
    assert (table["a"].points, table["e"].points) == (3, 3)
    assert (table["a"].opponents_points, table["e"].opponents_points) == (1, 3)
    assert [s.account_id for s in standings(state)][:2] == ["e", "a"]


def test_the_draw_order_breaks_a_full_tie() -> None:
    first = ((("a", "b", "c", "d"), ("e", "f", "g", "h")), ((1, 2, 3, 4), (1, 2, 3, 4)))
    swapped = ((("e", "f", "g", "h"), ("a", "b", "c", "d")), ((1, 2, 3, 4), (1, 2, 3, 4)))
    assert [s.account_id for s in standings(played(first))][:2] == ["a", "e"]
    assert [s.account_id for s in standings(played(swapped))][:2] == ["e", "a"]


def test_elimination_ranks_by_the_round_reached_then_its_place() -> None:
    state = played(
        ((("a", "b", "c", "d"), ("e", "f", "g", "h")), ((1, 2, 3, 4), (1, 2, 3, 4))),
        ((("f", "b", "e", "a"),), ((1, 2, 3, 4),)),
        format="elimination",
    )
    order = [s.account_id for s in standings(state)]
    assert order[:4] == ["f", "b", "e", "a"]
    # Out in round 1 in third place, 1 point each: opponents' points decide (g met e 4, f 5,
    # h 0: 9; c met a 3, b 4, d 0: 7); then h (e 4 + f 5 + g 1 = 10) before d (3 + 4 + 1 = 8).
    assert order[4:] == ["g", "c", "h", "d"]
