"""Creating, entering, withdrawing and retiring: each refusal named, and nothing changed by it."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest

from president.tournament.commands import (
    OPERATOR,
    SERVER,
    CancelTournament,
    CreateTournament,
    Enter,
    Invite,
    RecordResult,
    Retire,
    RevealRound,
    StartRound,
    Withdraw,
)
from president.tournament.decide import decide
from president.tournament.draw import fingerprint
from president.tournament.drawing import seat_command
from president.tournament.errors import Refusal, TournamentRefused
from president.tournament.events import Entered, EntrantRetired, TournamentCancelled
from president.tournament.standings import points_by_entrant
from president.tournament.state import Tournament
from tests.support.tournaments import CLOSES, OPENS, STARTS, T0, Driver, settings

DURING = OPENS + timedelta(minutes=5)


def refused(driver: Driver, command: object, reason: Refusal) -> TournamentRefused:
    """``command`` is refused for ``reason`` with a sentence, and the tournament is unchanged."""
    before = driver.state
    with pytest.raises(TournamentRefused) as caught:
        driver.do(command)  # type: ignore[arg-type]
    assert caught.value.reason == reason, caught.value
    assert caught.value.sentence and not caught.value.sentence[0].isupper()
    assert driver.state is before
    return caught.value


def entered(count: int, **changes: Any) -> Driver:
    driver = Driver().create(**changes)
    driver.now = DURING
    for n in range(count):
        driver.do(Enter(f"p{n}", rating_milli=1000 * n))
    return driver


def test_create_checks_its_settings() -> None:
    for bad in (
        settings(format="knockout"),
        settings(preset="poker"),
        settings(table_size=9),
        settings(rounds=0),
        settings(capacity=1),
        settings(closes_at=OPENS),
        settings(starts_at=OPENS - timedelta(minutes=1)),
        settings(format="elimination", closes_at=STARTS + timedelta(minutes=1)),
        settings(options=(("jokers", "maybe"),)),
        settings(name=" "),
    ):
        with pytest.raises(TournamentRefused) as caught:
            decide(None, CreateTournament("host", "t1", bad), T0)
        assert caught.value.reason == Refusal.BAD_SETTINGS
    with pytest.raises(TournamentRefused) as late:
        decide(None, CreateTournament("host", "t1", settings()), STARTS)
    assert late.value.reason == Refusal.BAD_SETTINGS
    driver = Driver().create()
    assert driver.t.host == "host"
    refused(driver, CreateTournament("host", "t1", settings()), Refusal.TOURNAMENT_EXISTS)


def test_commands_to_no_tournament_are_refused() -> None:
    with pytest.raises(TournamentRefused) as caught:
        decide(None, Enter("p0"), DURING)
    assert caught.value.reason == Refusal.NO_SUCH_TOURNAMENT


def test_only_the_host_or_the_operator_changes_a_tournament() -> None:
    driver = Driver().create(public=False)
    refused(driver, Invite("someone", ("p1",)), Refusal.NOT_HOST)
    refused(driver, CancelTournament("p1"), Refusal.NOT_HOST)
    refused(driver, StartRound("host", 1, "ff"), Refusal.NOT_SERVER)
    driver.do(Invite(OPERATOR, ("p1",)))
    assert driver.t.invited == {"p1"}
    assert driver.do(Invite("host", ("p1",))) == ()
    assert driver.do(CancelTournament("host")) == (TournamentCancelled(),)
    driver.now = DURING
    refused(driver, Enter("p1"), Refusal.TOURNAMENT_OVER)


def test_the_entry_window() -> None:
    driver = Driver().create()
    driver.now = OPENS - timedelta(seconds=1)
    refused(driver, Enter("p0"), Refusal.NOT_YET_OPEN)
    driver.now = CLOSES
    refused(driver, Enter("p0"), Refusal.ENTRY_CLOSED)
    driver.now = OPENS
    assert driver.do(Enter("p0", rating_milli=1500)) == (Entered("p0", False, 1500),)


def test_a_full_tournament_and_entering_twice() -> None:
    driver = entered(2, capacity=2)
    refused(driver, Enter("p0"), Refusal.ALREADY_ENTERED)
    refused(driver, Enter("p9"), Refusal.TOURNAMENT_FULL)
    driver.do(Withdraw("p0"))
    driver.do(Enter("p9"))
    assert [e.account_id for e in driver.t.entrants] == ["p1", "p9"]


def test_guests_enter_only_where_allowed() -> None:
    driver = entered(0)
    refused(driver, Enter("g1", guest=True), Refusal.GUESTS_NOT_ALLOWED)
    open_to_guests = entered(0, guests_allowed=True)
    open_to_guests.do(Enter("g1", guest=True))
    assert open_to_guests.t.entrant("g1") is not None


def test_invite_only_needs_an_invitation() -> None:
    driver = entered(0, public=False)
    refused(driver, Enter("p1"), Refusal.NOT_INVITED)
    driver.do(Invite("host", ("p1",)))
    driver.do(Enter("p1"))
    driver.do(Enter("host"))
    assert [e.account_id for e in driver.t.entrants] == ["p1", "host"]


def started(count: int, **changes: Any) -> Driver:
    driver = entered(count, **changes)
    driver.now = STARTS
    return driver


def test_the_first_round_waits_for_the_start_and_two_entrants() -> None:
    driver = entered(1)
    refused(driver, StartRound(SERVER, 1, "ff"), Refusal.TOO_EARLY)
    driver.now = STARTS
    refused(driver, StartRound(SERVER, 1, "ff"), Refusal.NOT_ENOUGH_ENTRANTS)
    refused(driver, StartRound(SERVER, 2, "ff"), Refusal.WRONG_ROUND)
    driver.now = DURING
    driver.do(Enter("p1"))
    driver.now = STARTS
    refused(driver, StartRound(SERVER, 1, ""), Refusal.BAD_COMMITMENT)
    driver.do(StartRound(SERVER, 1, "ff"))


def test_withdrawing_after_the_start_is_refused_retiring_is_not() -> None:
    driver = started(6)
    refused(driver, Retire("p0"), Refusal.NOT_STARTED)
    driver.play_round(random.Random(1))
    refused(driver, Withdraw("p0"), Refusal.TOURNAMENT_STARTED)
    refused(driver, Withdraw("nobody"), Refusal.NOT_ENTERED)
    refused(driver, CancelTournament("host"), Refusal.TOURNAMENT_STARTED)
    kept = points_by_entrant(driver.t)["p0"]
    assert driver.do(Retire("p0")) == (EntrantRetired("p0", 2),)
    refused(driver, Retire("p0"), Refusal.NOT_ENTERED)
    refused(driver, Enter("p0"), Refusal.ALREADY_ENTERED)
    driver.play_round(random.Random(2))
    assert "p0" not in {e.account_id for e in driver.t.rounds[-1].request.entrants}
    assert points_by_entrant(driver.t)["p0"] == kept


def test_a_retirement_mid_round_forfeits_that_round_unless_the_table_finished() -> None:
    driver = started(8)
    driver.play_round(random.Random(3))
    rng = random.Random(4)
    secret = b"\x07" * 32
    driver.do(StartRound(SERVER, 2, fingerprint(secret, "t1", 2)))
    driver.do(seat_command(driver.t, driver.draw, secret))
    seating = driver.t.rounds[-1].seating
    assert seating is not None
    finished, playing = seating[0], seating[1]
    driver.do(RecordResult(SERVER, 2, 0, (1, 2, 3, 4)))
    early, late = finished[0], playing[0]
    assert early is not None and late is not None
    before = points_by_entrant(driver.t)
    assert driver.do(Retire(early)) == (EntrantRetired(early, 3),)
    assert driver.do(Retire(late)) == (EntrantRetired(late, 2),)
    driver.do(RecordResult(SERVER, 2, 1, tuple(rng.sample(range(1, 5), 4))))
    driver.do(RevealRound(SERVER, 2, secret))
    after = points_by_entrant(driver.t)
    assert after[early] == before[early]  # its table's 3 points were in before it left
    assert after[late] == before[late]  # its seat was played by a bot: nothing for it
    assert sum(after.values()) > sum(before.values())


def test_late_arrivals_join_a_swiss_from_the_next_round() -> None:
    driver = started(4, closes_at=STARTS + timedelta(hours=1))
    driver.play_round(random.Random(5))
    driver.do(Enter("late"))
    assert points_by_entrant(driver.t)["late"] == 0
    driver.play_round(random.Random(6))
    request = driver.t.rounds[-1].request
    assert request.method == "swiss"
    assert [e.account_id for e in request.entrants][-1] == "late"
    driver.now = STARTS + timedelta(hours=1)
    refused(driver, Enter("later"), Refusal.TOURNAMENT_STARTED)


def test_an_elimination_takes_nobody_after_its_start() -> None:
    driver = started(4, format="elimination")
    driver.play_round(random.Random(7))
    driver.now = OPENS
    refused(driver, Enter("late"), Refusal.TOURNAMENT_STARTED)


def test_state_is_frozen() -> None:
    driver = entered(1)
    state: Tournament = driver.t
    with pytest.raises(AttributeError):
        state.host = "me"  # type: ignore[misc]
