"""Running rounds: the committed draw, seatings, results, the settle rule, reveals, the finish."""

from __future__ import annotations

import random
from typing import Any

import pytest

from president.tournament.commands import (
    SERVER,
    FinishTournament,
    RecordResult,
    Retire,
    RevealRound,
    SeatRound,
    SettleTable,
    StartRound,
)
from president.tournament.draw import check_draw, fingerprint
from president.tournament.drawing import redraw_matches, seat_command
from president.tournament.errors import Refusal
from president.tournament.events import TableSettled, TournamentFinished
from president.tournament.pairing import drawable
from president.tournament.port import CommittedDraw
from president.tournament.scoring import advancing, advancing_count, place_points, settled_places
from president.tournament.standings import standings
from tests.support.tournaments import STARTS, Driver, FakeSeatDraw
from tests.unit.tournament.test_entries import refused, started

SECRET = b"\x01" * 32


def committed(count: int, **changes: Any) -> Driver:
    driver = started(count, **changes)
    driver.do(StartRound(SERVER, 1, fingerprint(SECRET, "t1", 1)))
    return driver


def seated(count: int, **changes: Any) -> Driver:
    driver = committed(count, **changes)
    driver.do(seat_command(driver.t, driver.draw, SECRET))
    return driver


def test_the_round_commits_the_request_its_draw_is_given() -> None:
    driver = committed(6)
    record = driver.t.rounds[-1]
    assert record.fingerprint == fingerprint(SECRET, "t1", 1)
    assert record.request.round == 1
    assert record.request.method == "random"
    assert record.request.table_size == 4
    assert [(e.account_id, e.points, e.rating_milli) for e in record.request.entrants] == [
        (f"p{n}", 0, 1000 * n) for n in range(6)
    ]
    assert record.request.met_before == frozenset()
    refused(driver, StartRound(SERVER, 2, "ff"), Refusal.ROUND_UNDER_WAY)
    refused(driver, RevealRound(SERVER, 1, b""), Refusal.RESULTS_MISSING)
    refused(driver, RevealRound(SERVER, 1, SECRET), Refusal.RESULTS_MISSING)  # not even seated


def test_a_seating_must_seat_every_entrant_drawn_once() -> None:
    driver = committed(6)
    good = FakeSeatDraw().draw(SECRET, driver.t.rounds[-1].request)
    assert [sum(a is not None for a in table) for table in good] == [3, 3]
    missing = ((None, *good[0][1:]), good[1])
    doubled = ((good[1][0], *good[0][1:]), good[1])
    stranger = (("x", *good[0][1:]), good[1])
    short = (good[0][:3], good[1])
    all_bots = ((None,) * 4, *good)
    one_table = (("p0", "p1", "p2", "p3"),)
    for bad in (missing, doubled, stranger, short, all_bots, one_table):
        refused(driver, SeatRound(SERVER, 1, bad), Refusal.BAD_SEATING)
    driver.do(SeatRound(SERVER, 1, good))
    refused(driver, SeatRound(SERVER, 1, good), Refusal.WRONG_ROUND)


def test_results_for_unknown_tables_or_twice_are_refused() -> None:
    driver = seated(6)
    refused(driver, RecordResult(SERVER, 1, 2, (1, 2, 3, 4)), Refusal.UNKNOWN_TABLE)
    refused(driver, RecordResult(SERVER, 1, -1, (1, 2, 3, 4)), Refusal.UNKNOWN_TABLE)
    refused(driver, RecordResult(SERVER, 2, 0, (1, 2, 3, 4)), Refusal.WRONG_ROUND)
    refused(driver, RecordResult(SERVER, 1, 0, (1, 2, 2, 4)), Refusal.BAD_RESULT)
    refused(driver, RecordResult(SERVER, 1, 0, (1, 2, 3)), Refusal.BAD_RESULT)
    refused(driver, RecordResult("host", 1, 0, (1, 2, 3, 4)), Refusal.NOT_SERVER)
    driver.do(RecordResult(SERVER, 1, 0, (4, 3, 2, 1)))
    refused(driver, RecordResult(SERVER, 1, 0, (1, 2, 3, 4)), Refusal.RESULT_RECORDED)
    refused(
        driver, SettleTable(SERVER, 1, 0, (0, 1, 2, 3), frozenset({1})), Refusal.RESULT_RECORDED
    )


def test_points_per_place_and_who_advances() -> None:
    assert [place_points(p, 4) for p in (1, 2, 3, 4)] == [3, 2, 1, 0]
    assert [place_points(p, 5) for p in range(1, 6)] == [4, 3, 2, 1, 0]
    assert [advancing_count(n) for n in (3, 4, 5, 6, 7, 8)] == [1, 2, 2, 3, 3, 4]
    table = ("a", None, "b", "c")
    assert advancing(table, (3, 1, 2, 4), out=()) == ("b", "a")
    assert advancing(table, (3, 1, 2, 4), out={"b"}) == ("a", "c")


def test_the_settle_rule_ranks_those_still_seated_first() -> None:
    # Seats ranked 2, 0, 3, 1 by the totals when the table stopped; seat 0 left.
    assert settled_places((2, 0, 3, 1), {0}) == (4, 3, 1, 2)
    driver = seated(6)
    refused(
        driver,
        SettleTable(SERVER, 1, 0, (2, 0, 3, 1), frozenset()),
        Refusal.BAD_RESULT,  # 4 still seated: a club table of 4 can finish
    )
    refused(driver, SettleTable(SERVER, 1, 0, (2, 0, 3), frozenset({0})), Refusal.BAD_RESULT)
    refused(driver, SettleTable(SERVER, 1, 0, (2, 0, 3, 1), frozenset({7})), Refusal.BAD_RESULT)
    events = driver.do(SettleTable(SERVER, 1, 0, (2, 0, 3, 1), frozenset({0})))
    assert events == (TableSettled(1, 0, (4, 3, 1, 2), frozenset({0})),)
    assert driver.t.rounds[-1].settled == {0}


def test_reveal_then_finish_with_the_standings() -> None:
    driver = seated(6, rounds=1)
    refused(driver, FinishTournament(SERVER), Refusal.ROUNDS_REMAIN)
    for table in range(2):
        driver.do(RecordResult(SERVER, 1, table, (1, 2, 3, 4)))
    refused(driver, FinishTournament(SERVER), Refusal.ROUNDS_REMAIN)
    refused(driver, RevealRound(SERVER, 1, b""), Refusal.BAD_COMMITMENT)
    driver.do(RevealRound(SERVER, 1, SECRET))
    refused(driver, RevealRound(SERVER, 1, SECRET), Refusal.WRONG_ROUND)
    refused(driver, StartRound(SERVER, 2, "ff"), Refusal.WRONG_ROUND)
    assert redraw_matches(driver.t.rounds[-1], driver.draw)
    (finished,) = driver.do(FinishTournament(SERVER))
    assert isinstance(finished, TournamentFinished)
    assert finished.ranking == tuple(s.account_id for s in standings(driver.t))
    assert sorted(finished.ranking) == [f"p{n}" for n in range(6)]
    refused(driver, StartRound(SERVER, 2, "ff"), Refusal.TOURNAMENT_OVER)


def test_a_reveal_must_be_the_secret_the_round_committed_to() -> None:
    driver = seated(12)
    for table in range(3):
        driver.do(RecordResult(SERVER, 1, table, (1, 2, 3, 4)))
    refused(driver, RevealRound(SERVER, 1, b"\x02" * 32), Refusal.BAD_COMMITMENT)
    refused(driver, RevealRound(SERVER, 1, b"\x01" * 31), Refusal.BAD_COMMITMENT)
    driver.do(RevealRound(SERVER, 1, SECRET))
    assert redraw_matches(driver.t.rounds[-1], driver.draw)


def test_a_swiss_with_the_committed_draw_checks_round_by_round() -> None:
    """The core with SEAT_DRAW.md's draw behind its port: every round's seating is the
    draw of its revealed secret, as anyone's check_draw finds it, and a swap is named."""
    driver = started(10)
    driver.draw = CommittedDraw()  # type: ignore[assignment]
    rng = random.Random(11)
    for _ in range(3):
        driver.play_round(rng)
    for record in driver.t.rounds:
        assert record.secret is not None and record.seating is not None
        assert check_draw(record.secret, record.fingerprint, record.request, record.seating) is None
    last = driver.t.rounds[-1]
    assert last.secret is not None and last.seating is not None
    first, second = last.seating[0], last.seating[1]
    swapped = ((second[0], *first[1:]), (first[0], *second[1:]), *last.seating[2:])
    problem = check_draw(last.secret, last.fingerprint, last.request, swapped)
    assert problem is not None and problem.reason == "player_moved"


def test_the_next_round_cannot_start_before_the_last_is_revealed() -> None:
    driver = seated(6)
    refused(driver, StartRound(SERVER, 2, "ff"), Refusal.ROUND_UNDER_WAY)


def test_swiss_rounds_draw_with_points_and_who_met() -> None:
    driver = started(8)
    driver.play_round(random.Random(1))
    first = driver.t.rounds[0].seating
    assert first is not None
    driver.do(StartRound(SERVER, 2, "ff"))
    request = driver.t.rounds[-1].request
    assert request.method == "swiss"
    points = {s.account_id: s.points for s in standings(driver.t)}
    assert {e.account_id: e.points for e in request.entrants} == points
    assert sorted(points.values()) == [0, 0, 1, 1, 2, 2, 3, 3]
    pairs = {frozenset((a, b)) for t in first for a in t for b in t if a and b and a != b}
    assert request.met_before == pairs


def test_an_elimination_advances_the_top_half_to_a_final() -> None:
    driver = started(16, format="elimination", rounds=5, first_draw="rating_bands")
    rng = random.Random(2)
    driver.play_round(rng)
    assert len(driver.t.rounds[0].seating or ()) == 4
    driver.play_round(rng)
    second = driver.t.rounds[1]
    assert second.request.method == "rating_bands"
    assert len(second.request.entrants) == 8
    driver.play_round(rng)
    final = driver.t.rounds[2]
    assert len(final.seating or ()) == 1
    refused(driver, StartRound(SERVER, 4, "ff"), Refusal.WRONG_ROUND)
    driver.do(FinishTournament(SERVER))
    (table,) = final.seating or ()
    (places,) = final.places
    assert places is not None
    by_place = tuple(a for _, a in sorted(zip(places, table, strict=True)) if a is not None)
    assert driver.t.ranking[:4] == by_place
    assert {s.reached for s in standings(driver.t)} == {1, 2, 3}
    assert [s.reached for s in standings(driver.t)] == sorted(
        (s.reached for s in standings(driver.t)), reverse=True
    )


def test_a_retired_entrant_s_place_goes_to_the_next_best_at_the_table() -> None:
    driver = started(5, format="elimination", rounds=3)
    driver.play_round(random.Random(3))
    record = driver.t.rounds[-1]
    advancing_now = [e.account_id for e in drawable(driver.t)]
    assert len(advancing_now) == 4  # 2 of each table of 4 (3 and 2 entrants, bots beside)
    table, places = next(
        (t, p)
        for t, p in zip(record.seating or (), record.places, strict=True)
        if t.count(None) == 1
    )
    assert places is not None
    ranked = [a for _, a in sorted(zip(places, table, strict=True)) if a is not None]
    driver.do(Retire(ranked[0]))
    assert ranked[2] in {e.account_id for e in drawable(driver.t)}
    assert ranked[0] not in {e.account_id for e in drawable(driver.t)}


def test_an_elimination_round_needs_two_entrants_left() -> None:
    driver = started(5, format="elimination", rounds=3)
    driver.play_round(random.Random(3))
    for account in [e.account_id for e in driver.t.entrants][1:]:
        driver.do(Retire(account))
    refused(driver, StartRound(SERVER, 2, "ff"), Refusal.NOT_ENOUGH_ENTRANTS)
    driver.do(FinishTournament(SERVER))
    assert driver.t.status == "finished"


@pytest.mark.parametrize(("count", "tables"), [(2, 1), (4, 1), (5, 2)])
def test_small_fields_seat_as_few_tables_as_they_need(count: int, tables: int) -> None:
    driver = seated(count)
    assert len(driver.t.rounds[-1].seating or ()) == tables
    assert driver.now == STARTS
