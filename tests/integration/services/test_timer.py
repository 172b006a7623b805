"""The timer end to end: real NATS, the dealer, table and timer services as processes.

A human seat that does not act is played for at zero; rapid mode's shared
timer closes or opens tricks; the exchange's returns are made; a restarted
timer rebuilds the same deadline from the stream and still fires it; a
stale Timeout is refused by the table and changes nothing; a table the
timer cannot move shows in its overdue gauge until it moves.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator

import grpc
import pytest

from president.servicekit.grpc_errors import error_info
from president.servicekit.launcher import Stack
from president.table.v1 import table_pb2 as tpb
from president.timer.v1 import timer_pb2 as mpb
from president.timer.v1 import timer_pb2_grpc
from tests.support.service_stack import (
    Tables,
    event_at,
    event_name,
    message,
    service_stack,
    wait_until,
)

pytestmark = pytest.mark.slow
SLACK = 3.0  # seconds a timeout may come late on a busy test machine


@pytest.fixture(scope="module")
def timer_stack(tmp_path_factory: pytest.TempPathFactory, nats_url: str) -> Iterator[Stack]:
    workdir = tmp_path_factory.mktemp("timer")
    with service_stack(
        workdir, f"sqlite:///{workdir / 'president.db'}", nats_url, ("dealer", "table", "timer")
    ) as stack:
        yield stack


@pytest.fixture(scope="module")
def tables(timer_stack: Stack) -> Iterator[Tables]:
    client = Tables(timer_stack.address("table"))
    yield client
    client.close()


def deadlines(stack: Stack, table_id: str) -> list[mpb.Deadline]:
    with grpc.insecure_channel(stack.address("timer")) as channel:
        stub = timer_pb2_grpc.TimerServiceStub(channel)
        response = stub.ListDeadlines(mpb.ListDeadlinesRequest(table_id=table_id), timeout=5)
    return list(response.deadlines)


def first_after(tables: Tables, table_id: str, name: str, after: int = 0, timeout: float = 10):  # type: ignore[no-untyped-def]
    """The first event called ``name`` after version ``after``, waiting for it."""

    def probe():  # type: ignore[no-untyped-def]
        return next((e for e in tables.events(table_id, after) if event_name(e) == name), None)

    return wait_until(probe, timeout, f"{name} at {table_id}")


def elapsed_before(tables: Tables, table_id: str, item) -> float:  # type: ignore[no-untyped-def]
    """Seconds between an event and the one before it (the event that started the timer)."""
    before = tables.events(table_id, item.version - 2)[0]
    return (event_at(item) - event_at(before)).total_seconds()


def test_the_server_acts_for_a_human_who_does_not(tables: Tables) -> None:
    tables.create("turn", "classic", 4, turn_seconds="1", game_end="rounds:3")
    tables.sit("turn", 0, "alice", bot=False)
    for seat in (1, 2, 3):
        tables.sit("turn", seat, f"turnbot{seat}", bot=True)
    start = tables.start("turn")
    timed_out = first_after(tables, "turn", "TimedOut", start)
    assert message(timed_out).seat == 0
    assert 0.95 <= elapsed_before(tables, "turn", timed_out) <= 1 + SLACK
    acted = tables.events("turn", timed_out.version)[0]
    assert event_name(acted) in ("CardsPlayed", "Passed")
    assert message(acted).seat == 0
    tables.leave("turn", 0)  # a bot finishes the round: no more timeouts


def test_timeouts_are_counted_once_where_each_thing_happens(
    timer_stack: Stack, tables: Tables
) -> None:
    """The table counts the timeouts it acted on; the timer counts what it sent, by result."""
    tables.create("counted", "classic", 4, turn_seconds="1", game_end="rounds:3")
    tables.sit("counted", 0, "carol", bot=False)
    for seat in (1, 2, 3):
        tables.sit("counted", seat, f"countbot{seat}", bot=True)
    first_after(tables, "counted", "TimedOut", tables.start("counted"))
    tables.leave("counted", 0)

    def scrape(service: str) -> str:
        port = timer_stack.metrics_ports[service]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
            return str(page.read().decode())

    def sample(text: str, name: str, **labels: str) -> float:
        wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
        for line in text.splitlines():
            if line.startswith(f"{name}{{{wanted}}} "):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    timer = wait_until(
        lambda: (
            (page := scrape("timer"))
            and sample(page, "president_timer_deadlines_fired_total", kind="turn", result="acted")
            and page
        ),
        10,
        "the timer's count",
    )
    assert "\npresident_timeouts_total{" not in timer  # not counted a second time here
    assert sample(scrape("table"), "president_timeouts_total", kind="turn") >= 1


def test_rapid_timer_opens_an_empty_trick_and_closes_a_full_one(tables: Tables) -> None:
    tables.create("rapid", "house-rapid", 3, rapid_seconds="1", game_end="rounds:3")
    for seat in range(3):
        tables.sit("rapid", seat, f"rapid{seat}", bot=False)
    start = tables.start("rapid")
    opened = first_after(tables, "rapid", "TimedOut", start)
    assert message(opened).HasField("seat")  # the server opens for a player
    assert event_name(tables.events("rapid", opened.version)[0]) == "CardsPlayed"
    assert 0.95 <= elapsed_before(tables, "rapid", opened) <= 1 + SLACK

    closed = first_after(tables, "rapid", "TimedOut", opened.version)
    assert not message(closed).HasField("seat")
    assert event_name(tables.events("rapid", closed.version)[0]) == "TrickClosed"
    assert 0.95 <= elapsed_before(tables, "rapid", closed) <= 1 + SLACK
    for seat in range(3):
        tables.leave("rapid", seat)


def test_exchange_returns_are_made_at_zero(tables: Tables) -> None:
    tables.create("swap", "house", 4, turn_seconds="1", game_end="rounds:5", change_seats="false")
    for seat in range(4):
        tables.sit("swap", seat, f"hana{seat}", bot=False)
    tables.start("swap")
    tables.play_round_for_everyone("swap")
    ended = first_after(tables, "swap", "RoundEnded")
    standings = message(ended).standings
    # The President and the Vice-president are people: they owe their returns now.
    version = tables.next_round("swap")
    timed_out = first_after(tables, "swap", "TimedOut", version)
    assert not message(timed_out).HasField("seat")
    started = next(
        e
        for e in tables.events("swap")
        if event_name(e) == "RoundStarted" and message(e).round_no == 2
    )
    waited = (event_at(timed_out) - event_at(started)).total_seconds()
    assert 0.95 <= waited <= 1 + SLACK
    after = tables.events("swap", timed_out.version)
    returns = [message(e) for e in after[:2]]
    assert [event_name(e) for e in after[:3]] == ["CardsGiven", "CardsGiven", "PlayStarted"]
    assert {(given.giver, given.automatic) for given in returns} == {
        (standings[0], False),
        (standings[1], False),
    }
    for seat in range(4):
        tables.leave("swap", seat)


def test_a_restarted_timer_rebuilds_the_deadline_and_fires_it(
    timer_stack: Stack, tables: Tables
) -> None:
    # A turn long enough that the timer's restart (several seconds on a loaded machine) ends
    # before it: otherwise the restarted timer rightly fires it and the next turn's deadline
    # is the one rebuilt.
    tables.create("restart", "classic", 4, turn_seconds="12", game_end="rounds:3")
    tables.sit("restart", 0, "rita", bot=False)
    for seat in (1, 2, 3):
        tables.sit("restart", seat, f"restartbot{seat}", bot=True)
    start = tables.start("restart")
    before = wait_until(
        lambda: [
            d for d in deadlines(timer_stack, "restart") if d.HasField("seat") and d.seat == 0
        ],
        10,
        "the turn deadline",
    )[0]
    assert (before.kind, before.seat) == ("turn", 0)
    timer_stack.stop_one("timer", kill=True)
    timer_stack.start_one("timer")
    after = wait_until(lambda: deadlines(timer_stack, "restart"), 10, "the rebuilt deadline")[0]
    assert after == before  # same kind, seat, key and expiry: computed from event times
    timed_out = first_after(tables, "restart", "TimedOut", start, timeout=25)
    assert message(timed_out).seat == 0
    fired_ms = event_at(timed_out).timestamp() * 1000
    assert before.expires_at_ms - 50 <= fired_ms <= before.expires_at_ms + SLACK * 1000
    tables.leave("restart", 0)


def test_a_stale_timeout_is_refused_and_changes_nothing(timer_stack: Stack, tables: Tables) -> None:
    tables.create("stale", "classic", 4, turn_seconds="60", game_end="rounds:3")
    tables.sit("stale", 0, "sam", bot=False)
    for seat in (1, 2, 3):
        tables.sit("stale", seat, f"stalebot{seat}", bot=True)
    tables.start("stale")
    running = wait_until(
        lambda: [d for d in deadlines(timer_stack, "stale") if d.HasField("seat") and d.seat == 0],
        10,
        "sam's turn",
    )[0]
    version = tables.events("stale")[-1].version
    stale = [(running.timer_key + 1, 1, 1), (running.timer_key, 1, 9), (running.timer_key, 2, 1)]
    if running.timer_key > 0:
        stale.append((running.timer_key - 1, 1, 1))
    for key, game_no, round_no in stale:
        with pytest.raises(grpc.RpcError) as refused:
            tables.stub.Timeout(
                tpb.TimeoutRequest(
                    table_id="stale", timer_key=key, game_no=game_no, round_no=round_no
                ),
                timeout=10,
            )
        assert refused.value.code() == grpc.StatusCode.ABORTED
        info = error_info(refused.value)
        assert info is not None
        assert info.reason == "STALE"
    assert tables.events("stale")[-1].version == version
    assert deadlines(timer_stack, "stale") == [running]
    tables.leave("stale", 0)


def test_list_deadlines_checks_the_table_id(timer_stack: Stack) -> None:
    with grpc.insecure_channel(timer_stack.address("timer")) as channel:
        stub = timer_pb2_grpc.TimerServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.ListDeadlines(mpb.ListDeadlinesRequest(table_id="no such/table"), timeout=5)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        info = error_info(refused.value)
        assert info is not None
        assert info.reason == "INVALID_TABLE_ID"
        listed = stub.ListDeadlines(mpb.ListDeadlinesRequest(), timeout=5).deadlines
        expiries = [d.expires_at_ms for d in listed]
        assert expiries == sorted(expiries)
        assert not stub.ListDeadlines(
            mpb.ListDeadlinesRequest(table_id="unknown"), timeout=5
        ).deadlines


def test_a_table_the_timer_cannot_move_shows_in_its_overdue_gauge(
    timer_stack: Stack, tables: Tables
) -> None:
    """The TableStandingStill alert's metric: the table service is away when a turn runs
    out, so the table stands still past its deadline, and the timer's
    ``president_timer_overdue_seconds`` says for how long; once the table is back the timer
    fires, the table moves and the gauge falls."""
    tables.create("still", "classic", 4, turn_seconds="1", game_end="rounds:3")
    tables.sit("still", 0, "stella", bot=False)
    for seat in (1, 2, 3):
        tables.sit("still", seat, f"stillbot{seat}", bot=True)
    start = tables.start("still")
    wait_until(lambda: deadlines(timer_stack, "still"), 10, "stella's turn")

    def overdue() -> float:
        port = timer_stack.metrics_ports["timer"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
            for line in page.read().decode().splitlines():
                if line.startswith("president_timer_overdue_seconds "):
                    return float(line.rsplit(" ", 1)[1])
        raise AssertionError("the timer does not export president_timer_overdue_seconds")

    timer_stack.stop_one("table")
    try:
        wait_until(lambda: overdue() >= 2.0, 15, "the standing table to show as overdue")
    finally:
        timer_stack.start_one("table")
    first_after(tables, "still", "TimedOut", start, timeout=20)
    tables.leave("still", 0)
    wait_until(lambda: overdue() < 1.0, 20, "the gauge to fall once the table moved")
