"""A deal secret lost before the deal: the dealer no longer holds a round the table
committed (its store failed over without it) when the table asks for the cards.

The stated rule (docs/auditing.md): the table stores ``DealSecretLost`` for that
commitment (no card was dealt from it), commits the round afresh under a new
fingerprint and deals from it; the game goes on. The audit reports the withdrawn
commitment as the operator's finding and checks the round against the new one.
Before: the table answered ``DEALER_FAILED`` for ever.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from president import audit, codec
from president.hosting.deadlines import waits_for_server
from president.hosting.dealer import RoundKey
from president.hosting.events import DealCommitted, DealSecretLost
from president.hosting.host import TableHost
from president.hosting.streams import stream_id
from president.rules import game as g
from president.servicekit.nats import envelope
from president.services.gateway.calls.dealcheck import check_deal
from president.store import EventStore, StoredEvent
from tests.support.table_host import FlakyDealer, bot_table, human_move


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as opened:
        yield opened


def play_game(host: TableHost) -> None:
    """Seat 0's moves to the game's end (bots play the other seats)."""
    for step in range(2000):
        command = human_move(host, "t1")
        if command is None:
            return
        host.decide_and_append("t1", command, f"m{step}", "p0")
    raise AssertionError("the game did not end")


def deal_events(store: EventStore) -> list[tuple[str, object]]:
    """The deal's own events and each round's start, in order."""
    out: list[tuple[str, object]] = []
    for stored in store.read_stream(stream_id("t1")):
        kind = stored.type.rsplit(".", 1)[-1]
        if kind in ("DealCommitted", "DealSecretLost", "DealRevealed", "RoundStarted"):
            out.append((kind, codec.decode(stored.type, stored.payload)))
    return out


def verified(events: list[StoredEvent]) -> audit.TableReport:
    return audit.verify_table(events)


def test_a_round_lost_before_its_deal_is_committed_afresh_and_the_game_goes_on(
    store: EventStore,
) -> None:
    dealer = FlakyDealer(loses_before_deal={(1, 1)})
    host = TableHost(store, dealer)
    bot_table(host)
    host.decide_and_append("t1", g.StartGame(), "start", "server")  # DEALER_FAILED before
    assert host.load("t1").game.phase == g.GamePhase.ROUND
    first, withdrawn, again, started = deal_events(store)[:4]
    assert first[0] == "DealCommitted" and isinstance(first[1], DealCommitted)
    assert withdrawn == ("DealSecretLost", DealSecretLost(1, 1, first[1].fingerprint))
    assert again[0] == "DealCommitted" and isinstance(again[1], DealCommitted)
    assert (again[1].game_no, again[1].round_no) == (1, 1)
    assert again[1].fingerprint != first[1].fingerprint
    assert started[0] == "RoundStarted"
    play_game(host)
    assert host.load("t1").game.phase == g.GamePhase.GAME_OVER

    report = verified(store.read_stream(stream_id("t1")))
    statuses = [(item.game_no, item.round_no, item.status) for item in report.rounds]
    assert statuses[0] == (1, 1, audit.WITHDRAWN)
    assert statuses[1:] == [(1, 1, audit.VERIFIED), (1, 2, audit.VERIFIED)]
    assert not report.ok, "a withdrawn commitment passed as if nothing happened"
    assert report.problem is not None and report.problem.event_type == "DealSecretLost"
    assert "before its deal" in report.problem.reason


def test_a_deal_left_undone_whose_round_the_dealer_then_lost_is_committed_afresh(
    store: EventStore,
) -> None:
    """The commitment is stored, the dealer goes away before the deal, and comes back
    without the round: the next try withdraws the stored commitment and commits again
    (before: a second commitment with another fingerprint, which the audit fails)."""
    dealer = FlakyDealer(down=True)
    host = TableHost(store, dealer)
    bot_table(host)
    assert host.decide_and_append("t1", g.StartGame(), "start", "server").unfinished
    [(kind, committed)] = deal_events(store)
    assert kind == "DealCommitted" and isinstance(committed, DealCommitted)
    assert waits_for_server(host.load("t1"))
    dealer.forget(RoundKey("t1", committed.game_no, committed.round_no))
    dealer.down = False
    host.timeout("t1", 0, 1, 0)  # the server deadline's Timeout: the deal is tried again
    kinds = [kind for kind, _ in deal_events(store)]
    assert kinds == ["DealCommitted", "DealSecretLost", "DealCommitted", "RoundStarted"]
    play_game(host)
    report = verified(store.read_stream(stream_id("t1")))
    assert [item.status for item in report.rounds] == [
        audit.WITHDRAWN,
        audit.VERIFIED,
        audit.VERIFIED,
    ]


def test_a_deal_left_undone_keeps_its_commitment_when_the_dealer_kept_it(
    store: EventStore,
) -> None:
    """A dealer that was away but kept the round: the stored commitment stands, nothing is
    withdrawn, and the audit passes."""
    dealer = FlakyDealer(down=True)
    host = TableHost(store, dealer)
    bot_table(host)
    host.decide_and_append("t1", g.StartGame(), "start", "server")
    dealer.down = False
    host.timeout("t1", 0, 1, 0)
    kinds = [kind for kind, _ in deal_events(store)]
    assert kinds[:2] == ["DealCommitted", "RoundStarted"]
    play_game(host)
    assert verified(store.read_stream(stream_id("t1"))).ok


def test_check_deal_checks_the_new_commitment_of_a_round_lost_before_its_deal(
    store: EventStore,
) -> None:
    """A player's CheckDeal of that round checks the deal against the new commitment (before:
    DATA_LOSS SECRET_LOST, as if the dealt round had lost its secret)."""
    host = TableHost(store, FlakyDealer(loses_before_deal={(1, 1)}))
    bot_table(host)
    host.decide_and_append("t1", g.StartGame(), "start", "server")
    play_game(host)
    events = [envelope(stored) for stored in store.read_stream(stream_id("t1"))]
    checked = check_deal(events, 1, 1)
    assert checked.verified, checked.problem
    renewed = [kind_and_event[1] for kind_and_event in deal_events(store)][2]
    assert isinstance(renewed, DealCommitted) and checked.fingerprint == renewed.fingerprint
