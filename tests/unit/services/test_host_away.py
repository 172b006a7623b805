"""A host who stays away passes the role on: while no gateway reports the host connected and
another person is, the timer's ``host_away`` wait runs (``host_away_seconds``), and its
``MoveOn`` hands the role to the next connected person; without servers."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from president import codec
from president.hosting import events as ev
from president.hosting.commands import MoveOn, PassHost, bind, decide
from president.hosting.countdown import countdown, unix_ms
from president.hosting.deadlines import BETWEEN_ROUNDS, HOST_AWAY, IdleRules, TableClock
from president.hosting.move_on import move_on
from president.hosting.outcome import SERVER
from president.hosting.projection import fold
from president.rules.errors import ErrorCode, Rejected
from president.services.timer.deadlines import Clocks, DeadlineBoard
from tests.unit.services.test_timer_deadlines import Driver, at

RULES = IdleRules(host_idle_seconds=120, empty_seconds=10, host_away_seconds=20)


class Hosted(Driver):
    """A table of four people, p0 its host, none of them connected yet."""

    def __init__(self) -> None:
        super().__init__("classic", game_end="rounds:3")
        self.note(ev.HostChanged("p0", "", automatic=False), at(0))

    def note(self, event: ev.TableEvent, when: datetime) -> None:
        version = self.table.version + 1
        self.table = fold(self.table, event, version)
        self.envelopes.append(self._envelope(codec.encode(event), version, when))

    def connect(self, seat: int, when: datetime, connected: bool = True) -> None:
        self.note(ev.SeatPresence(seat, "gw-1", connected), when)


def due(driver: Driver, rules: IdleRules = RULES):  # type: ignore[no-untyped-def]
    clocks = Clocks(DeadlineBoard(), idle=rules)
    for envelope in driver.envelopes:
        assert clocks.apply(envelope, at(9999)) is None
    return clocks.board.get(driver.table_id)


def test_a_host_away_in_the_lobby_passes_the_role_to_the_next_connected_person() -> None:
    table = Hosted()
    table.connect(0, at(1))
    assert due(table) is None  # the host is here
    table.connect(2, at(2))
    table.connect(0, at(5), connected=False)  # the host's tab closed
    waiting = due(table)
    assert waiting is not None and waiting.kind == HOST_AWAY
    assert waiting.expires_at == at(5) + timedelta(seconds=20)
    assert waiting.timer_key == 0  # the host's seat
    game = table.game
    change = move_on(table.table, HOST_AWAY, game.game_no, game.round_no, waiting.timer_key)
    assert change == ev.HostChanged("p2", "p0", automatic=True)  # p1 is not connected

    # Through the table's one path: the server's MoveOn is the role passing on.
    command, actor = bind(table.table, MoveOn(HOST_AWAY, game.game_no, game.round_no, 0), "timer")
    assert (command, actor) == (PassHost(change), SERVER)
    assert decide(table.table, command) == [change]
    table.note(change, at(25))
    assert table.table.host_player_id == "p2"
    assert due(table) is None  # the new host is connected


def test_a_host_who_comes_back_keeps_the_role() -> None:
    table = Hosted()
    table.connect(1, at(1))
    assert due(table) is not None  # the host never connected: away
    table.connect(0, at(3))
    assert due(table) is None
    with pytest.raises(Rejected) as stale:  # the wait's MoveOn, come late
        move_on(table.table, HOST_AWAY, table.game.game_no, table.game.round_no, 0)
    assert stale.value.code == ErrorCode.STALE


def test_nobody_to_pass_to_or_the_setting_off_means_no_wait() -> None:
    table = Hosted()
    assert due(table) is None  # nobody connected: nobody to take the role
    table.connect(1, at(1))
    assert due(table, IdleRules(host_idle_seconds=120, empty_seconds=10)) is None  # 0: off


def test_between_rounds_a_host_away_passes_the_role_before_the_table_moves_on() -> None:
    table = Hosted()
    table.connect(0, at(1))
    table.connect(3, at(1))
    table.start(at(2))
    table.play_out_round(at(3))
    waiting = due(table)
    assert waiting is not None and waiting.kind == BETWEEN_ROUNDS  # the host is here
    table.connect(0, at(4), connected=False)
    waiting = due(table)
    assert waiting is not None and waiting.kind == HOST_AWAY
    assert waiting.expires_at == at(4) + timedelta(seconds=20)
    game = table.game
    assert move_on(table.table, HOST_AWAY, game.game_no, game.round_no, 0) == ev.HostChanged(
        "p3", "p0", automatic=True
    )
    with pytest.raises(Rejected):  # an earlier round's wait
        move_on(table.table, HOST_AWAY, game.game_no, game.round_no - 1, 0)


def test_a_table_that_moves_on_sooner_than_the_host_away_wait_moves_on() -> None:
    """The host's own wait ends first (1 s against 20 s): the table moves on then, as it
    would with the host there, and is not held for the role to pass."""
    table = Hosted()
    table.connect(0, at(1))
    table.connect(3, at(1))
    table.start(at(2))
    table.play_out_round(at(3))
    table.connect(0, at(4), connected=False)
    quick = IdleRules(host_idle_seconds=1, empty_seconds=10, host_away_seconds=20)
    waiting = due(table, quick)
    assert waiting is not None and waiting.kind == BETWEEN_ROUNDS
    assert waiting.expires_at == at(3) + timedelta(seconds=1)  # from the round's end


def test_the_view_says_whose_absence_the_host_away_countdown_counts() -> None:
    """The gateway's countdown (the one place a view's timing is built) names the away host's
    seat, so a page can say who is away and when the role passes on."""
    table = Hosted()
    table.note(ev.HostChanged("p2", "p0", automatic=False), at(0))
    table.connect(1, at(1))  # the host, p2 at seat 2, never connected
    view = countdown(TableClock(table.table, started_at=at(1), idle=RULES), at(3))
    assert (view.deadline_kind, view.deadline_seat) == (HOST_AWAY, 2)
    assert view.deadline_unix_ms == unix_ms(at(1) + timedelta(seconds=20))
    assert view.server_now_unix_ms == unix_ms(at(3))
