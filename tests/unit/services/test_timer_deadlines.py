"""The timer's deadline rules and scheduler, without servers: engine events in, deadlines out."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from president import codec
from president.deal import deal
from president.events.v1 import events_pb2 as pb
from president.hosting import events as ev
from president.hosting.deadlines import EXCHANGE, RAPID, TURN, running_timer
from president.hosting.dealer import DealtCards, deal_command
from president.hosting.projection import Table, fold, table_from_created
from president.rules import bots
from president.rules import game as g
from president.rules import round as rnd
from president.rules.options import options_for
from president.servicekit.follower import Gap
from president.servicekit.partition import Partition
from president.servicekit.table_client import TimeoutResult
from president.services.timer.deadlines import Clocks, DeadlineBoard
from president.services.timer.scheduler import (
    MAX_RETRY_SECONDS,
    QUICK_RETRIES,
    Scheduler,
    retry_delay,
)

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


class Driver:
    """A table driven through the engine, its events wrapped as envelopes with chosen times."""

    def __init__(
        self, preset: str, players: int = 4, table_id: str = "t1", **overrides: object
    ) -> None:
        options = options_for(preset, overrides)
        empty = g.new_table(options, players)
        created = ev.TableCreated(
            table_id=table_id,
            preset=options.preset,
            options=codec.option_texts(options),
            host_player_id="",
            visibility="",
            seat_count=len(empty.seats),
        )
        self.table_id = table_id
        self.table: Table = table_from_created(created)
        self.envelopes = [self._envelope(codec.encode(created), 1, T0)]
        self.secret = 0
        for seat in range(players):
            self.do(g.SitDown(seat, f"p{seat}"), T0)

    def _envelope(self, message: object, version: int, when: datetime) -> pb.EventEnvelope:
        assert hasattr(message, "SerializeToString")
        return pb.EventEnvelope(
            stream_id=f"table-{self.table_id}",
            version=version,
            type=codec.type_name(message),  # type: ignore[arg-type]
            payload=message.SerializeToString(),
            time=when.isoformat(),
        )

    @property
    def game(self) -> g.GameState:
        return self.table.game

    @property
    def round(self) -> rnd.RoundState:
        assert self.game.round is not None
        return self.game.round

    def do(self, command: g.GameCommand | rnd.Command, when: datetime) -> list[g.GameEvent]:
        events = g.decide(self.game, command)
        for event in events:
            version = self.table.version + 1
            self.table = fold(self.table, event, version)
            self.envelopes.append(self._envelope(codec.encode(event), version, when))
        return events

    def deal(self, when: datetime) -> None:
        order = g.deal_order(self.game)
        self.secret += 1
        dealt = deal(self.secret.to_bytes(32, "big"), range(len(order)))
        self.do(deal_command(self.game, order, DealtCards(dealt.hands, dealt.set_aside)), when)

    def start(self, when: datetime) -> None:
        self.do(g.StartGame(), when)
        self.deal(when)

    def play_out_round(self, when: datetime) -> None:
        while self.game.phase == g.GamePhase.ROUND and self.round.phase != rnd.RoundPhase.OVER:
            if self.round.phase == rnd.RoundPhase.EXCHANGE:
                self.do(rnd.Timeout(), when)
                continue
            seats = (
                [self.round.to_act]
                if not self.round.options.rapid
                else [s for s in self.round.players if self.round.hands[s]]
            )
            for seat in seats:
                command = bots.choose_action(self.round, seat)
                if command is not None:
                    self.do(command, when)
                    break
            else:  # pragma: no cover - a bot always has a move in turn-based play
                self.do(rnd.Timeout(), when)

    def clocks(self, partition: Partition | None = None) -> Clocks:
        clocks = Clocks(DeadlineBoard(), partition)
        for envelope in self.envelopes:
            assert clocks.apply(envelope, at(9999)) is None
        return clocks


def only_deadline(driver: Driver):  # type: ignore[no-untyped-def]
    return driver.clocks().board.get(driver.table_id)


# -- the rules ------------------------------------------------------------------------------


def test_no_deadline_in_the_lobby_or_between_rounds_or_after_the_game() -> None:
    driver = Driver("classic", game_end="rounds:1")
    assert only_deadline(driver) is None
    driver.start(at(1))
    assert only_deadline(driver) is not None
    driver.play_out_round(at(2))
    assert driver.game.phase == g.GamePhase.GAME_OVER
    assert only_deadline(driver) is None

    between = Driver("classic", game_end="rounds:3")
    between.start(at(1))
    between.play_out_round(at(2))
    assert between.game.phase == g.GamePhase.BETWEEN_ROUNDS
    assert only_deadline(between) is None


def test_turn_deadline_runs_from_the_event_that_gave_the_turn() -> None:
    driver = Driver("classic", turn_seconds=30)
    driver.start(at(5))
    due = only_deadline(driver)
    assert due is not None
    assert (due.kind, due.seat, due.timer_key) == (TURN, driver.round.to_act, 0)
    assert due.expires_at == at(35)
    assert (due.game_no, due.round_no) == (1, 1)

    leader = driver.round.to_act
    command = bots.choose_action(driver.round, leader)
    assert isinstance(command, rnd.PlayCards)
    driver.do(command, at(12))
    due = only_deadline(driver)
    assert due is not None
    assert due.seat == driver.round.to_act != leader
    assert due.timer_key == 1
    assert due.expires_at == at(42)

    # A pass gives the turn to the next seat: its own 30 s from the pass.
    passer = driver.round.to_act
    driver.do(rnd.Pass(passer), at(20))
    due = only_deadline(driver)
    assert due is not None
    assert due.seat == driver.round.to_act != passer
    assert (due.timer_key, due.expires_at) == (2, at(50))


def test_turn_deadline_after_a_closed_trick_is_the_leaders() -> None:
    driver = Driver("classic", players=4, turn_seconds=10)
    driver.start(at(0))
    second = 0.0
    while driver.round.trick_version == 0 or driver.round.top:
        second += 1
        command = bots.choose_action(driver.round, driver.round.to_act)
        assert command is not None
        driver.do(command, at(second))
    due = only_deadline(driver)
    assert due is not None
    assert driver.round.top == 0
    assert (due.kind, due.seat, due.expires_at) == (TURN, driver.round.to_act, at(second + 10))


def test_rapid_timer_restarts_on_plays_and_new_tricks_only() -> None:
    driver = Driver("house-rapid", rapid_seconds=10)
    driver.start(at(0))
    due = only_deadline(driver)
    assert due is not None
    assert (due.kind, due.seat, due.timer_key, due.expires_at) == (RAPID, None, 0, at(10))

    opener = driver.round.players[0]
    driver.do(rnd.PlayCards(opener, bots.choose_lead(driver.round, opener)), at(3))
    due = only_deadline(driver)
    assert due is not None
    assert (due.timer_key, due.expires_at) == (1, at(13))

    # Passes do not extend it.
    passer = next(s for s in driver.round.players if s != opener)
    driver.do(rnd.Pass(passer), at(6))
    due = only_deadline(driver)
    assert due is not None
    assert (due.timer_key, due.expires_at) == (1, at(13))

    # Everyone else passes: the trick closes, and the new trick restarts it.
    for seat in driver.round.players:
        if seat not in (opener, passer) and not driver.round.sat_out >> seat & 1:
            driver.do(rnd.Pass(seat), at(8))
    assert driver.round.top == 0
    due = only_deadline(driver)
    assert due is not None
    assert due.timer_key == driver.round.trick_version == 2
    assert due.expires_at == at(18)


def test_rapid_timeout_events_restart_it_too() -> None:
    driver = Driver("house-rapid", rapid_seconds=10)
    driver.start(at(0))
    driver.do(rnd.Timeout(0), at(10))  # empty trick: the server opens
    due = only_deadline(driver)
    assert due is not None
    assert (due.timer_key, due.expires_at) == (1, at(20))
    driver.do(rnd.Timeout(1), at(20))  # non-empty trick: it closes
    due = only_deadline(driver)
    assert due is not None
    assert (due.timer_key, due.expires_at) == (2, at(30))


@pytest.mark.parametrize("preset", ["classic", "house-rapid"])
def test_exchange_deadline_runs_from_the_exchange_start_for_every_return(preset: str) -> None:
    driver = Driver(preset, turn_seconds=20, rapid_seconds=5, game_end="rounds:5")
    driver.start(at(0))
    driver.play_out_round(at(1))
    driver.do(g.NextRound(), at(2))
    driver.deal(at(3))
    assert driver.round.phase == rnd.RoundPhase.EXCHANGE
    due = only_deadline(driver)
    assert due is not None
    assert (due.kind, due.seat, due.expires_at) == (EXCHANGE, None, at(23))
    assert due.timer_key == driver.round.timer_key

    owed = driver.round.pending[0]
    driver.do(
        rnd.ReturnCards(owed.giver, bots.choose_return(driver.round, owed.giver, owed.size)),
        at(10),
    )
    assert driver.round.phase == rnd.RoundPhase.EXCHANGE
    due = only_deadline(driver)
    assert due is not None
    assert due.expires_at == at(23)  # a return does not restart it
    assert due.timer_key == driver.round.timer_key  # but the key follows the table

    driver.do(rnd.Timeout(driver.round.timer_key), at(23))
    assert driver.round.phase == rnd.RoundPhase.PLAY
    due = only_deadline(driver)
    assert due is not None
    assert due.kind == (RAPID if preset == "house-rapid" else TURN)
    assert due.expires_at == at(28 if preset == "house-rapid" else 43)


def test_a_replay_computes_the_same_deadlines_whatever_the_time_of_replay() -> None:
    driver = Driver("classic")
    driver.start(at(1))
    command = bots.choose_action(driver.round, driver.round.to_act)
    assert command is not None
    driver.do(command, at(4))
    first = driver.clocks().board.get("t1")
    again = Clocks(DeadlineBoard())
    for envelope in driver.envelopes:
        again.apply(envelope, datetime.now(UTC))
    assert again.board.get("t1") == first


def test_repeated_events_are_ignored_and_gaps_reported() -> None:
    driver = Driver("classic")
    driver.start(at(1))
    clocks = Clocks(DeadlineBoard())
    for envelope in driver.envelopes[:5]:
        assert clocks.apply(envelope, T0) is None
    assert clocks.apply(driver.envelopes[2], T0) is None  # again: nothing happens
    assert clocks.version("t1") == 5
    assert clocks.apply(driver.envelopes[7], T0) == Gap("t1", 5)
    assert clocks.version("t1") == 5
    unknown = Clocks(DeadlineBoard())
    assert unknown.apply(driver.envelopes[3], T0) == Gap("t1", 0)


def test_idle_tables_without_a_deadline_are_forgotten_and_read_again_later() -> None:
    lobby = Driver("classic", table_id="lobby")  # created, nobody plays: no deadline
    playing = Driver("classic", table_id="playing")
    playing.start(at(0))
    clocks = Clocks(DeadlineBoard())
    for envelope in lobby.envelopes:
        assert clocks.apply(envelope, at(10)) is None
    for envelope in playing.envelopes:
        assert clocks.apply(envelope, at(10)) is None
    assert clocks.board.get("playing") is not None and clocks.board.get("lobby") is None
    assert clocks.forget_idle(at(10)) == []  # not idle long enough
    assert clocks.forget_idle(at(700)) == ["lobby"]  # a running deadline keeps its table
    assert clocks.version("lobby") == 0 and len(clocks) == 1
    lobby.start(at(800))
    assert clocks.apply(lobby.envelopes[-1], at(800)) == Gap("lobby", 0)  # its history is read


def test_partitions_split_tables_between_replicas() -> None:
    ids = [f"table{i}" for i in range(40)]
    owners = [[p for p in range(3) if Partition(p, 3).owns(table_id)] for table_id in ids]
    assert all(len(owner) == 1 for owner in owners)
    assert {owner[0] for owner in owners} == {0, 1, 2}
    driver = Driver("classic", table_id="table0")
    driver.start(at(0))
    mine = next(p for p in range(3) if Partition(p, 3).owns("table0"))
    assert driver.clocks(Partition(mine, 3)).board.get("table0") is not None
    other = Partition((mine + 1) % 3, 3)
    assert driver.clocks(other).board.get("table0") is None
    assert Partition.parse("") == Partition()
    assert Partition.parse("2/4") == Partition(2, 4)
    for bad in ("4/4", "x", "1/0", "-1/2"):
        with pytest.raises(SystemExit):
            Partition.parse(bad)


def test_running_timer_follows_the_table_state() -> None:
    driver = Driver("classic")
    assert running_timer(driver.table) is None
    driver.start(at(0))
    timer = running_timer(driver.table)
    assert timer is not None
    assert (timer.kind, timer.seconds) == (TURN, 30)


# -- the scheduler --------------------------------------------------------------------------


class FakeTable:
    """Our own TimeoutPort: answers from a script and records the calls."""

    def __init__(self, *answers: TimeoutResult) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, int, int, int]] = []
        self.called = asyncio.Event()

    async def timeout(
        self, table_id: str, timer_key: int, game_no: int, round_no: int
    ) -> tuple[TimeoutResult, str]:
        self.calls.append((table_id, timer_key, game_no, round_no))
        self.called.set()
        answer = self.answers.pop(0) if self.answers else TimeoutResult.STALE
        return answer, answer.value


async def run_scheduler(clocks: Clocks, table: FakeTable, seconds: float) -> None:
    scheduler = Scheduler(clocks, table)
    scheduler.ready.set()
    task = asyncio.create_task(scheduler.run())
    await asyncio.sleep(seconds)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_scheduler_fires_an_expired_deadline_once() -> None:
    driver = Driver("classic")
    driver.start(datetime.now(UTC) - timedelta(seconds=60))
    clocks = driver.clocks()
    table = FakeTable(TimeoutResult.ACTED)
    await run_scheduler(clocks, table, 0.3)
    assert table.calls == [("t1", 0, 1, 1)]


async def test_scheduler_waits_for_a_future_deadline() -> None:
    driver = Driver("classic", turn_seconds=1)
    driver.start(datetime.now(UTC) - timedelta(seconds=0.5))
    clocks = driver.clocks()
    table = FakeTable(TimeoutResult.ACTED)
    await run_scheduler(clocks, table, 0.2)
    assert table.calls == []
    await run_scheduler(clocks, table, 0.6)
    assert table.calls == [("t1", 0, 1, 1)]


async def test_scheduler_retries_failures_with_backoff_and_drops_gone_tables() -> None:
    driver = Driver("classic")
    driver.start(datetime.now(UTC) - timedelta(seconds=60))
    clocks = driver.clocks()
    table = FakeTable(TimeoutResult.RETRY, TimeoutResult.RETRY, TimeoutResult.GONE)
    await run_scheduler(clocks, table, 1.2)
    assert len(table.calls) == 3  # 0 s, +0.2 s, +0.4 s, then gone
    assert clocks.board.get("t1") is None
    assert clocks.version("t1") == 0


def test_retries_come_at_most_a_second_apart_at_first_then_back_off() -> None:
    delays = [retry_delay(attempt) for attempt in range(1, 17)]
    assert delays[:4] == [0.2, 0.4, 0.8, 1.0]
    # A peer restarted within seconds is asked again at most a second after it is back ...
    assert all(delay <= 1.0 for delay in delays[:QUICK_RETRIES])
    assert sum(delays[:QUICK_RETRIES]) >= 8.0
    # ... and one that stays down is asked ever less often, never in a hot loop.
    assert delays[QUICK_RETRIES:14] == [2.0, 4.0, 8.0, MAX_RETRY_SECONDS]
    assert delays[-1] == MAX_RETRY_SECONDS
    assert delays == sorted(delays)


async def test_scheduler_fires_again_when_the_table_gets_a_new_deadline() -> None:
    driver = Driver("classic")
    past = datetime.now(UTC) - timedelta(seconds=60)
    driver.start(past)
    clocks = driver.clocks()
    table = FakeTable(TimeoutResult.STALE, TimeoutResult.ACTED)
    scheduler = Scheduler(clocks, table)
    scheduler.ready.set()
    task = asyncio.create_task(scheduler.run())
    await asyncio.wait_for(table.called.wait(), 2)
    table.called.clear()
    seen = len(driver.envelopes)
    command = bots.choose_action(driver.round, driver.round.to_act)
    assert command is not None
    driver.do(command, past)
    for envelope in driver.envelopes[seen:]:
        clocks.apply(envelope, past)
    scheduler.notify()
    await asyncio.wait_for(table.called.wait(), 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert table.calls == [("t1", 0, 1, 1), ("t1", 1, 1, 1)]


def test_a_live_timer_starts_a_deadline_when_the_event_comes_not_at_its_stamp() -> None:
    """A table replica whose clock runs 60 s behind the timer's stamps its events 60 s in
    the timer's past: live, the turn still gets its whole time from when the timer got the
    event (make cluster-chaos's skewed clocks: every turn was timed out at once)."""
    driver = Driver("classic")
    driver.start(at(0))  # stamped at 0 s by the replica's clock
    by_stamp = Clocks(DeadlineBoard())
    for envelope in driver.envelopes:
        by_stamp.apply(envelope, at(9999))
    stamped = by_stamp.board.get("t1")
    assert stamped is not None
    turn = stamped.expires_at - at(0)
    for now in (at(60), at(-60)):  # the timer's clock ahead of the replica's, or behind
        live = Clocks(DeadlineBoard())
        for envelope in driver.envelopes:
            assert live.apply(envelope, now, live=True) is None
        due = live.board.get("t1")
        assert due is not None and due.expires_at == now + turn
    near = Clocks(DeadlineBoard())  # within 2 s of the timer's clock: the stamp counts
    for envelope in driver.envelopes:
        near.apply(envelope, at(1.5), live=True)
    assert near.board.get("t1") == stamped
