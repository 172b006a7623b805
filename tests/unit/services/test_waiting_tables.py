"""A table never stalls: the waiting deadlines (between rounds, after a game, nobody left) and
what the table does when one runs out (:mod:`president.hosting.move_on`), without servers."""

from __future__ import annotations

from datetime import timedelta

import pytest

from president.hosting.deadlines import BETWEEN_ROUNDS, BOTS, CLOSING, RAPID, SERVER, IdleRules
from president.hosting.events import TableClosed
from president.hosting.move_on import move_on
from president.rules import bots
from president.rules import game as g
from president.rules import round as rnd
from president.rules.errors import ErrorCode, Rejected
from president.services.timer.deadlines import Clocks, DeadlineBoard
from tests.unit.services.test_timer_deadlines import Driver, at

RULES = IdleRules(host_idle_seconds=30, empty_seconds=10)


def waiting_deadline(driver: Driver, rules: IdleRules | None = RULES):  # type: ignore[no-untyped-def]
    clocks = Clocks(DeadlineBoard(), idle=rules)
    for envelope in driver.envelopes:
        assert clocks.apply(envelope, at(9999)) is None
    return clocks.board.get(driver.table_id)


def test_between_rounds_the_host_has_a_while_then_the_table_moves_on() -> None:
    driver = Driver("classic", game_end="rounds:3")
    driver.start(at(1))
    driver.play_out_round(at(5))
    due = waiting_deadline(driver)
    assert due is not None and due.kind == BETWEEN_ROUNDS
    assert due.expires_at == at(5) + timedelta(seconds=30)
    assert (due.game_no, due.round_no) == (1, 1)
    assert waiting_deadline(driver, None) is None  # without the rules: the host decides
    assert move_on(driver.table, BETWEEN_ROUNDS, 1, 1) == g.NextRound()
    for kind, round_no, key in ((BETWEEN_ROUNDS, 0, 0), (BETWEEN_ROUNDS, 1, 1), (CLOSING, 1, 0)):
        with pytest.raises(Rejected) as stale:  # an earlier round's, after a game's, closing
            move_on(driver.table, kind, 1, round_no, key)
        assert stale.value.code == ErrorCode.STALE


def test_an_unlimited_game_ends_and_a_finished_game_goes_back_to_the_lobby() -> None:
    unlimited = Driver("house", game_end="unlimited")
    unlimited.start(at(1))
    unlimited.play_out_round(at(2))
    assert move_on(unlimited.table, BETWEEN_ROUNDS, 1, 1) == g.EndGame()
    unlimited.do(g.EndGame(), at(3))
    after_game = waiting_deadline(unlimited)
    assert after_game is not None and after_game.kind == BETWEEN_ROUNDS
    assert after_game.expires_at == at(3) + timedelta(seconds=30)  # a clock of its own
    assert move_on(unlimited.table, BETWEEN_ROUNDS, 1, 1, after_game.timer_key) == g.BackToLobby()
    with pytest.raises(Rejected):  # the last round's wait, come late: not the game's
        move_on(unlimited.table, BETWEEN_ROUNDS, 1, 1, 0)


def test_a_practice_table_may_advance_sooner() -> None:
    driver = Driver("classic", game_end="rounds:3", advance_seconds=4)
    driver.start(at(1))
    driver.play_out_round(at(2))
    due = waiting_deadline(driver)
    assert due is not None and due.expires_at == at(6)


def test_a_table_every_person_left_closes_after_the_grace() -> None:
    driver = Driver("classic", game_end="rounds:3")
    driver.start(at(1))
    driver.play_out_round(at(2))
    for seat in (1, 2, 3):  # people leave, bots take their seats
        driver.do(g.Leave(seat), at(3))
        driver.do(g.SitDown(seat, f"bot-{seat}", is_bot=True), at(3))
    due = waiting_deadline(driver)
    assert due is not None and due.kind == BETWEEN_ROUNDS  # one person is still here
    driver.do(g.Leave(0), at(7))
    due = waiting_deadline(driver)
    assert due is not None and due.kind == CLOSING and due.expires_at == at(17)
    assert move_on(driver.table, CLOSING, 9, 9) == TableClosed(
        "nobody was left at the table: it closed"
    )
    driver.do(g.SitDown(0, "ann"), at(8))  # a person came back: no closing
    due = waiting_deadline(driver)
    assert due is not None and due.kind == BETWEEN_ROUNDS


def test_rapid_bots_move_a_human_like_delay_after_the_last_play() -> None:
    driver = Driver("house-rapid", players=3, rapid_seconds=10)
    driver.do(g.Leave(2), at(0))
    driver.do(g.SitDown(2, "bot-2", is_bot=True), at(0))
    driver.start(at(1))
    due = waiting_deadline(driver)
    assert due is not None and due.kind == BOTS
    assert due.expires_at == at(1) + timedelta(milliseconds=1200)  # the default delay
    assert due.timer_key == driver.table.version
    bot_move = move_on(driver.table, BOTS, due.game_no, due.round_no, due.timer_key)
    assert isinstance(bot_move, rnd.PlayCards | rnd.Pass) and bot_move.seat == 2
    with pytest.raises(Rejected) as stale:  # the table moved on since the delay began
        move_on(driver.table, BOTS, due.game_no, due.round_no, due.timer_key - 1)
    assert stale.value.code == ErrorCode.STALE
    assert waiting_deadline(driver, None).kind == RAPID  # without the timer's rules
    instant = Driver("house-rapid", players=3, rapid_seconds=10, bot_delay_ms=0)
    instant.do(g.Leave(2), at(0))
    instant.do(g.SitDown(2, "bot-2", is_bot=True), at(0))
    instant.start(at(1))
    assert waiting_deadline(instant).kind == RAPID  # bot_delay_ms 0: no waiting bots


def test_turn_play_bots_wait_their_pace_when_the_table_sets_one() -> None:
    """``bot_pace_ms``: in turn play a bot's move waits that long from the start of its turn
    (the timer's MoveOn makes it), so a person can follow; without it, bots move at once."""
    for pace, expected in ((700, BOTS), (0, None)):
        driver = Driver("classic", players=3, bot_pace_ms=pace)
        for seat in (1, 2):
            driver.do(g.Leave(seat), at(0))
            driver.do(g.SitDown(seat, f"bot-{seat}", is_bot=True), at(0))
        driver.start(at(1))
        moment = 1.0
        while driver.round.to_act == 0:  # the person plays until a bot's turn comes
            command = bots.choose_action(driver.round, 0)
            assert command is not None
            moment += 1
            driver.do(command, at(moment))
        due = waiting_deadline(driver)
        assert due is not None
        if expected is None:  # no pace: the table owes the bot's move itself (the server's step)
            assert due.kind == SERVER, due
            continue
        assert due.kind == BOTS and due.expires_at == at(moment) + timedelta(milliseconds=pace)
        bot_move = move_on(driver.table, BOTS, due.game_no, due.round_no, due.timer_key)
        assert isinstance(bot_move, rnd.PlayCards | rnd.Pass)
        assert bot_move.seat == driver.round.to_act != 0
