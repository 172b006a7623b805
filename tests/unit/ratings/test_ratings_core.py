"""The pure ratings core: the model on finishing orders, windows at their boundaries, ranks
with ties, totals and streaks; and it does no I/O (no clock, no database, no network)."""

from __future__ import annotations

import ast
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from openskill.models import PlackettLuce

import president.ratings
from president.ratings.accounts import is_bot, rating_account
from president.ratings.ranks import page_ranks
from president.ratings.skill import NEW, PROVISIONAL_ROUNDS, Skill, rate_round
from president.ratings.totals import totals
from president.ratings.windows import UnknownWindow, check_window, period, periods

RATINGS_DIR = Path(president.ratings.__file__).parent


def test_a_round_moves_ratings_by_place_as_openskill_does() -> None:
    after = rate_round({}, ["a", "b", "c", "d"])
    model = PlackettLuce()
    reference = model.rate([[model.rating()] for _ in range(4)], ranks=[0.0, 1.0, 2.0, 3.0])
    for account, team in zip("abcd", reference, strict=True):
        assert (after[account].mu, after[account].sigma) == (team[0].mu, team[0].sigma)
        assert after[account].rounds == 1
    assert after["a"].mu > after["b"].mu > NEW.mu > after["c"].mu > after["d"].mu
    assert after["a"].conservative == after["a"].mu - 3 * after["a"].sigma


def test_an_account_with_several_seats_takes_the_mean_of_its_seats() -> None:
    after = rate_round({}, ["x", "bot:basic", "y", "bot:basic"])
    seats = rate_round({}, ["x", "b1", "y", "b2"])
    assert after["bot:basic"].mu == (seats["b1"].mu + seats["b2"].mu) / 2
    assert after["bot:basic"].rounds == 1
    assert rate_round({}, ["alone"]) == {}


def test_new_accounts_are_provisional_until_enough_rounds() -> None:
    skills: dict[str, Skill] = {}
    for _ in range(PROVISIONAL_ROUNDS - 1):
        skills.update(rate_round(skills, ["p", "q", "r"]))
    assert skills["p"].provisional and skills["p"].rounds == PROVISIONAL_ROUNDS - 1
    skills.update(rate_round(skills, ["p", "q", "r"]))
    assert not skills["p"].provisional
    assert skills["p"].sigma < NEW.sigma


def test_bots_are_rated_as_their_levels_account() -> None:
    assert rating_account("bot:strong:2") == "bot:strong"
    assert rating_account("bot:7") == "bot:basic"  # a bot of old plays at basic
    assert rating_account("acct-1") == "acct-1"
    assert is_bot("bot:basic") and not is_bot("acct-1")


def test_weeks_start_on_monday_and_months_on_the_first_utc() -> None:
    sunday_night = datetime(2026, 11, 29, 23, 59, 59, 999999, tzinfo=UTC)
    monday = sunday_night + timedelta(microseconds=1)
    assert period("week", sunday_night).key == "week:2026-11-23"
    assert period("week", monday).key == "week:2026-11-30"
    assert period("week", monday).starts == monday
    assert period("week", monday).ends == monday + timedelta(days=7)
    assert period("month", datetime(2026, 11, 30, 23, 59, tzinfo=UTC)).key == "month:2026-11"
    december = period("month", datetime(2026, 12, 31, 23, 59, tzinfo=UTC))
    assert december.key == "month:2026-12"
    assert december.ends == datetime(2027, 1, 1, tzinfo=UTC)
    # A time in another zone falls in the UTC window.
    paris = datetime(2026, 12, 1, 0, 30, tzinfo=timezone(timedelta(hours=1)))
    assert period("month", paris).key == "month:2026-11"  # 23:30 UTC on November 30
    assert [p.key for p in periods(monday)] == ["week:2026-11-30", "month:2026-11", "all"]
    with pytest.raises(UnknownWindow):
        check_window("decade")


def test_equal_values_share_a_rank() -> None:
    assert page_ranks([9, 7, 7, 7, 3], 0, 0) == [1, 2, 2, 2, 5]
    assert page_ranks([7, 7, 3], 1, 2) == [2, 2, 5]  # a page starting inside a tie
    assert page_ranks([], 0, 0) == []


def test_totals_and_the_best_streak_of_first_places() -> None:
    found = totals([1, 1, 3, 1, 1, 1, 2])
    assert found.rounds == 7 and found.places == (5, 1, 1)
    assert found.best_streak == 3
    assert found.average_place == 10 / 7
    assert totals([]).rounds == 0 and totals([]).average_place == 0.0


def test_the_ratings_core_does_no_io() -> None:
    allowed = {"__future__", "collections", "dataclasses", "datetime", "itertools", "openskill"}
    for path in sorted(RATINGS_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                top = name.split(".")[0]
                if top == "president":
                    assert name.startswith(("president.ratings", "president.rules")), name
                else:
                    assert top in allowed, f"{path.name} imports {name}"
        assert "now(" not in path.read_text(), f"{path.name} reads the clock"
