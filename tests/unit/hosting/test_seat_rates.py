"""A seat's reactions and chat messages keep a rate at the times the log stores: the host
decides with the rule the audit holds the log to (:mod:`president.hosting.seat_rates`), from
the table's own stored times, so two replicas (or a host that reloads) agree."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from president.audit import verify_table
from president.hosting.commands import Chat, MuteSeat
from president.hosting.dealer import LocalDealer
from president.hosting.errors import RateExceeded
from president.hosting.host import TableHost
from president.hosting.seat_rates import CHAT, REACTIONS, SeatTimes
from president.hosting.streams import stream_id
from president.play.recorded import GameClock
from president.rules import game as g
from president.rules.errors import Rejected
from president.rules.options import options_for
from president.store import EventStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as events:
        yield events


@pytest.fixture
def clock() -> GameClock:
    return GameClock()


@pytest.fixture
def host(store: EventStore, clock: GameClock) -> TableHost:
    """A lobby table: ann hosts in seat 0, bob sits in 1."""
    tables = TableHost(store, LocalDealer(), clock=clock)
    tables.create("t", options_for("club"), seat_count=4, host_player_id="ann")
    tables.decide_and_append("t", g.SitDown(0, "ann", display_name="Ann"), "s0", "ann")
    tables.decide_and_append("t", g.SitDown(1, "bob", display_name="Bob"), "s1", "bob")
    return tables


def test_a_seat_reacts_a_few_times_per_window_on_any_replica(
    host: TableHost, store: EventStore, clock: GameClock
) -> None:
    first = host.append_reaction("t", 1, "wave", "r0", "bob")
    for n in range(1, REACTIONS.burst):
        clock.wait(1)
        host.append_reaction("t", 1, "wave", f"r{n}", "bob")
    clock.wait(1)
    version = host.load("t").version
    with pytest.raises(RateExceeded) as refused:
        host.append_reaction("t", 1, "wave", "burst", "bob")
    assert refused.value.reason == "REACTION_RATE"
    assert "at most 5 reactions every 10 seconds: try again in 5 s" in str(refused.value)
    assert refused.value.wait_seconds == 5.0
    assert host.load("t").version == version  # nothing changed
    host.append_reaction("t", 0, "wave", "other-seat", "ann")  # another seat's own rate
    # Another replica knows the seat's times from the log alone, and refuses too.
    other = TableHost(store, LocalDealer(), clock=clock)
    with pytest.raises(RateExceeded):
        other.append_reaction("t", 1, "wave", "burst-there", "bob")
    clock.wait(5)  # the first reaction is 10 s back: the rate's edge
    other.append_reaction("t", 1, "wave", "later", "bob")
    host.append_reaction("t", 0, "wave", "ann-again", "ann")  # catches up with the store
    with pytest.raises(RateExceeded):
        host.append_reaction("t", 1, "wave", "again", "bob")
    assert host.append_reaction("t", 1, "wave", "r0", "bob") == first  # a retry, not refused
    assert verify_table(store.read_stream(stream_id("t"))).ok  # what it took, the audit takes


def test_a_seat_chats_a_few_times_per_window_and_refusals_do_not_count(
    host: TableHost, clock: GameClock
) -> None:
    host.decide_and_append("t", MuteSeat(1, True), "m1", "ann")
    for n in range(CHAT.burst + 2):  # refused, muted: nothing stored, nothing counted
        with pytest.raises(Rejected):
            host.decide_and_append("t", Chat(1, "hi"), f"muted-{n}", "bob")
    host.decide_and_append("t", MuteSeat(1, False), "m2", "ann")
    for n in range(CHAT.burst):
        host.decide_and_append("t", Chat(1, f"hi {n}"), f"c{n}", "bob")
    with pytest.raises(RateExceeded) as refused:
        host.decide_and_append("t", Chat(1, "one more"), "c-more", "bob")
    assert refused.value.reason == "CHAT_RATE"
    assert "at most 4 chat messages every 10 seconds" in str(refused.value)
    clock.wait(CHAT.window.total_seconds())
    host.decide_and_append("t", Chat(1, "one more"), "c-later", "bob")
    assert len(host.load("t").chat_times[0][1]) == CHAT.burst  # the last few kept, no more


def test_the_rule_counts_any_window_of_stored_times(clock: GameClock) -> None:
    recent: SeatTimes = ()
    start = clock()
    for seconds in (0, 2, 4, 6, 8):
        recent = REACTIONS.after(recent, 3, start + timedelta(seconds=seconds))
    assert REACTIONS.wait(recent, 3, start + timedelta(seconds=10)) is None
    assert REACTIONS.wait(recent, 3, start + timedelta(seconds=9)) == timedelta(seconds=1)
    assert REACTIONS.wait(recent, 2, start) is None  # another seat
