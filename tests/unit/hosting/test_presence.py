"""Presence as the table folds it and the takeover timer it drives: a seat is connected while
any gateway replica reports it so, its presence ends with its occupant, and a disconnected
person's turn has ``takeover_seconds`` (from the same start as its turn timer)."""

from __future__ import annotations

from datetime import datetime

import pytest

from president import codec
from president.hosting.deadlines import TAKEOVER, TURN
from president.hosting.events import SeatPresence
from president.hosting.presence import connected_seats
from president.hosting.projection import fold, is_current
from president.hosting.seat_views import table_view
from president.rules import bots
from president.rules import game as g
from president.rules import round as rnd
from president.rules.options import OptionError, options_for
from tests.unit.services.test_timer_deadlines import Driver, at, only_deadline


def report(driver: Driver, seat: int, gateway: str, connected: bool, when: datetime) -> None:
    """A gateway replica's presence report, stored at ``when``."""
    event = SeatPresence(seat, gateway, connected)
    version = driver.table.version + 1
    driver.table = fold(driver.table, event, version)
    driver.envelopes.append(driver._envelope(codec.encode(event), version, when))


def test_a_seat_is_connected_while_any_replica_reports_it() -> None:
    driver = Driver("house", players=4)
    report(driver, 1, "a", True, at(0))
    report(driver, 1, "b", True, at(0))
    report(driver, 1, "a", False, at(0))
    assert connected_seats(driver.table.presence) == {1}  # replica b still has a stream
    assert [s.connected for s in table_view(driver.table, None).seats] == [0, 1, 0, 0]
    report(driver, 1, "b", False, at(0))
    assert connected_seats(driver.table.presence) == frozenset()


def test_a_seats_presence_ends_with_its_occupant() -> None:
    driver = Driver("house", players=4)
    report(driver, 2, "a", True, at(0))
    driver.do(g.Leave(2), at(0))
    assert connected_seats(driver.table.presence) == frozenset()
    driver.do(g.SitDown(2, "newcomer"), at(0))
    assert not table_view(driver.table, None).seats[2].connected


def test_a_disconnected_seat_to_act_has_the_takeover_time_from_its_turns_start() -> None:
    driver = Driver("house", players=4, turn_seconds=30, takeover_seconds=5)
    for seat in range(4):
        report(driver, seat, "a", True, at(0))
    driver.start(at(10))
    seat = driver.round.to_act
    due = only_deadline(driver)
    assert (due.kind, due.seat, due.expires_at) == (TURN, seat, at(40))
    report(driver, seat, "a", False, at(12))  # away mid-turn: 5 s from the turn's start
    due = only_deadline(driver)
    assert (due.kind, due.seat, due.expires_at) == (TAKEOVER, seat, at(15))
    report(driver, seat, "a", True, at(14))  # back: the turn timer again, same start
    due = only_deadline(driver)
    assert (due.kind, due.seat, due.expires_at) == (TURN, seat, at(40))


def test_without_takeover_a_disconnected_seat_keeps_its_turn_timer() -> None:
    driver = Driver("house", players=4, turn_seconds=30)
    driver.start(at(10))
    due = only_deadline(driver)
    assert (due.kind, due.expires_at) == (TURN, at(40))


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"takeover_seconds": 30}, "shorter than turn_seconds"),
        ({"takeover_seconds": 10, "turn_seconds": 10}, "shorter than turn_seconds"),
        ({"takeover_seconds": 3601}, "from 0 (off) to 3600"),
        ({"takeover_seconds": "x"}, "whole number"),
    ],
)
def test_bad_takeover_seconds_are_refused_with_a_sentence(
    overrides: dict[str, object], words: str
) -> None:
    with pytest.raises(OptionError, match="takeover_seconds") as error:
        options_for("house", overrides)
    assert words in str(error.value)


def test_a_presence_report_leaves_a_choice_current_and_a_move_does_not() -> None:
    driver = Driver("house", players=4)
    driver.start(at(0))
    chosen_on = driver.table.version
    report(driver, 1, "a", True, at(1))
    assert is_current(driver.table, chosen_on)  # only a stream opened since
    assert is_current(driver.table, driver.table.version)
    driver.do(rnd.Pass(driver.round.to_act) if driver.round.top else _lead(driver), at(2))
    assert not is_current(driver.table, chosen_on)
    assert not is_current(driver.table, chosen_on + 1)


def _lead(driver: Driver) -> rnd.Command:
    command = bots.choose_action(driver.round, driver.round.to_act)
    assert command is not None
    return command
