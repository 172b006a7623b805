"""What the server owes a table (a deal, a reveal) when the dealer fails: a committed
command answers success, no round starts before the last one's secret is stored, and the
timer's server deadline (or the next command) finishes the step once the dealer is back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from president import codec
from president.hosting.autoplay import next_bot_command
from president.hosting.deadlines import SERVER, advance, start_clock, waits_for_server
from president.hosting.events import DealCommitted, DealSecretLost, TableCreated
from president.hosting.host import TableHost
from president.hosting.projection import fold_stored
from president.hosting.streams import stream_id
from president.rules import game as g
from president.servicekit.errors import ServiceError
from president.store import EventStore, NewEvent
from tests.support.table_host import FlakyDealer, bot_table, human_move


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as opened:
        yield opened


def play_to_round_end(host: TableHost) -> None:
    """Seat 0's moves until the first round is over; each is answered (none raises)."""
    for step in range(500):
        if host.load("t1").game.phase != g.GamePhase.ROUND:
            return
        command = human_move(host, "t1")
        assert command is not None
        host.decide_and_append("t1", command, f"m{step}", "p0")
    raise AssertionError("the round did not end")


def types(store: EventStore) -> list[str]:
    return [event.type.rsplit(".", 1)[-1] for event in store.read_stream(stream_id("t1"))]


def test_a_play_that_ends_a_round_is_answered_success_when_its_reveal_fails(
    store: EventStore,
) -> None:
    dealer = FlakyDealer()
    host = TableHost(store, dealer)
    bot_table(host)
    host.decide_and_append("t1", g.StartGame(), "start", "server")
    dealer.reveals_down = True
    play_to_round_end(host)  # the last play would raise DEALER_UNAVAILABLE without the fix
    stored = types(store)
    assert "RoundEnded" in stored and "DealRevealed" not in stored
    assert waits_for_server(host.load("t1"))
    dealer.reveals_down = False
    host.timeout("t1", 0, 1, 1)  # the server deadline's Timeout: the reveal is tried again
    assert types(store)[-1] == "DealRevealed"
    assert not waits_for_server(host.load("t1"))


def test_no_round_starts_before_the_last_ones_reveal_is_stored(store: EventStore) -> None:
    dealer = FlakyDealer()
    host = TableHost(store, dealer)
    bot_table(host)
    host.decide_and_append("t1", g.StartGame(), "start", "server")
    dealer.reveals_down = True
    play_to_round_end(host)
    before = types(store)
    with pytest.raises(ServiceError) as refused:  # the reveal first, and it fails: not run
        host.decide_and_append("t1", g.NextRound(), "next", "p0")
    assert refused.value.reason == "DEALER_UNAVAILABLE"
    assert types(store) == before, "a next round was stored before the reveal"
    dealer.reveals_down = False
    host.decide_and_append("t1", g.NextRound(), "next", "p0")  # the client's resend
    stored = types(store)
    assert stored.index("DealRevealed") < stored.index("NextRoundStarted")


def test_a_table_that_waits_for_the_server_has_a_server_deadline(store: EventStore) -> None:
    dealer = FlakyDealer(down=True)
    host = TableHost(store, dealer)
    bot_table(host)
    assert host.decide_and_append("t1", g.StartGame(), "start", "server").unfinished
    assert host.load("t1").game.phase == g.GamePhase.DEALING
    clock, at = None, datetime(2026, 1, 1, tzinfo=UTC)
    for stored in store.read_stream(stream_id("t1")):  # the timer's replay of the stream
        event = codec.decode(stored.type, stored.payload)
        if clock is None:
            assert isinstance(event, TableCreated)
            clock = start_clock(event)
        else:
            clock = advance(clock, event, stored.version, at)
    assert clock is not None
    due = clock.deadline
    assert due is not None and due.kind == SERVER and due.expires_at > at
    assert due.expires_at - at <= timedelta(seconds=5)
    dealer.down = False
    host.timeout("t1", due.timer_key, due.game_no, due.round_no)
    assert host.load("t1").game.phase == g.GamePhase.ROUND  # dealt by the deadline's Timeout


def test_a_bot_move_left_undone_gets_a_server_deadline_and_is_made(
    store: EventStore, tmp_path: Path
) -> None:
    """A store outage after a human's play leaves the bot to move undone: the timer's
    server deadline (not the bot seat's turn timer) has the table make it."""
    host = TableHost(store, FlakyDealer())
    bot_table(host)
    host.decide_and_append("t1", g.StartGame(), "start", "server")
    play_to_round_end(host)
    events = store.read_stream(stream_id("t1"))
    table, cut = None, 0
    for stored in events:  # the first version where a bot is to move
        table = fold_stored(table, [stored])
        assert table is not None
        if table.game.phase == g.GamePhase.ROUND and next_bot_command(table.game) is not None:
            cut = stored.version
            break
    assert table is not None and cut and waits_for_server(table)
    with EventStore.from_url(f"sqlite:///{tmp_path / 'cut.db'}", migrate=True) as left:
        for stored in events[:cut]:  # the log as the outage left it
            new = NewEvent(stored.type, stored.payload, {"actor": "test"})
            left.append(stream_id("t1"), stored.version - 1, [new], f"copy-{stored.version}")
        clock = None
        for stored in left.read_stream(stream_id("t1")):
            event = codec.decode(stored.type, stored.payload)
            at = datetime(2026, 1, 1, tzinfo=UTC)
            clock = (
                start_clock(event) if clock is None else advance(clock, event, stored.version, at)
            )  # type: ignore[arg-type]
        assert clock is not None and clock.deadline is not None
        assert clock.deadline.kind == SERVER
        again = TableHost(left, FlakyDealer())
        due = clock.deadline
        again.timeout("t1", due.timer_key, due.game_no, due.round_no)
        assert left.current_version(stream_id("t1")) > cut  # the bot moved
        assert not waits_for_server(again.load("t1"))


def test_a_secret_the_dealer_lost_is_recorded_and_the_game_goes_on(store: EventStore) -> None:
    dealer = FlakyDealer()
    host = TableHost(store, dealer)
    bot_table(host)
    host.decide_and_append("t1", g.StartGame(), "start", "server")
    dealer.secrets_lost = True
    play_to_round_end(host)  # the reveal the round's end owes: the dealer lost the secret
    events = list(store.read_stream(stream_id("t1")))
    committed = next(
        codec.decode(e.type, e.payload) for e in events if e.type.endswith(".DealCommitted")
    )
    assert isinstance(committed, DealCommitted)
    lost = codec.decode(events[-1].type, events[-1].payload)
    assert lost == DealSecretLost(1, 1, committed.fingerprint)
    assert not waits_for_server(host.load("t1"))
    dealer.secrets_lost = False
    host.decide_and_append("t1", g.NextRound(), "next", "p0")  # the game goes on
    assert types(store)[-1] != "DealSecretLost" and "NextRoundStarted" in types(store)
