"""Rulebook 000's seat rules and the host role on TableHost (SQLite): a leaver cannot reclaim a
seat during the game, a newcomer between rounds starts with no role, score, leftover cards or
exchange, and the host role passes on by handover, when the host leaves, or when the host
stays away (the timer's ``host_away`` wait), which the audit accepts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from president import codec
from president.audit.verify import verify_table
from president.hosting.dealer import LocalDealer
from president.hosting.events import HostChanged, SeatPresence
from president.hosting.host import TableHost
from president.hosting.move_on import HOST_AWAY
from president.hosting.seat_views import table_view
from president.hosting.streams import stream_id
from president.rules import game as g
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import options_for
from president.store import EventStore


@pytest.fixture
def host(tmp_path: Path) -> Iterator[TableHost]:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as store:
        yield TableHost(store, LocalDealer())


def seat_table(host: TableHost, people: dict[int, str], seats: int = 4) -> str:
    """A classic table: ``people`` by seat (the first is the host), bots elsewhere."""
    table_id = "t1"
    first = people[min(people)]
    host.create(
        table_id,
        options_for("classic", {"game_end": "rounds:5"}),
        seat_count=seats,
        host_player_id=first,
    )
    for seat in range(seats):
        if seat in people:
            player = people[seat]
            command = g.SitDown(seat, player, display_name=player.title())
            host.decide_and_append(table_id, command, f"sit-{seat}", player)
        else:
            host.decide_and_append(
                table_id, g.SitDown(seat, f"b{seat}", True), f"sit-{seat}", first
            )
    host.decide_and_append(table_id, g.StartGame(), "start", first)
    return table_id


def finish_round(host: TableHost, table_id: str) -> None:
    """Let the server's timer act for everyone until the round is over."""
    for _ in range(500):
        game = host.load(table_id).game
        if game.phase != g.GamePhase.ROUND or game.round is None:
            return
        host.timeout(table_id, game.round.timer_key, game.game_no, game.round_no)
    raise AssertionError("the round did not end")


def host_changes(host: TableHost, table_id: str) -> list[HostChanged]:
    stored = host._store.read_stream(stream_id(table_id))
    decoded = [codec.decode(event.type, event.payload) for event in stored]
    return [event for event in decoded if isinstance(event, HostChanged)]


def test_a_leaver_cannot_reclaim_a_seat_until_the_game_ends(host: TableHost) -> None:
    table_id = seat_table(host, {0: "ann", 1: "bob"})
    finish_round(host, table_id)
    host.decide_and_append(table_id, g.Leave(1), "bob-leaves", "bob")
    with pytest.raises(Rejected) as refused:
        host.decide_and_append(table_id, g.SitDown(1, "bob"), "bob-back", "bob")
    assert refused.value.code == ErrorCode.LEFT_THIS_GAME
    assert "until it ends" in refused.value.reason
    assert not host.load(table_id).game.seats[1].occupied  # nothing changed
    host.decide_and_append(table_id, g.EndGame(), "end", "ann")
    assert host.load(table_id).game.departed == frozenset()  # the game is over: free to sit


def test_a_newcomer_between_rounds_starts_like_round_one(host: TableHost) -> None:
    table_id = seat_table(host, {0: "ann", 1: "bob"})
    finish_round(host, table_id)
    host.decide_and_append(table_id, g.Leave(1), "bob-leaves", "bob")
    host.decide_and_append(table_id, g.SitDown(1, "cid", display_name="Cid"), "cid-sits", "cid")
    table = host.load(table_id)
    assert table.game.scores[1] == 0
    view = table_view(table, 1)
    seat = view.seats[1]
    assert (seat.score, seat.role, seat.card_count) == (0, "", 0)
    assert list(view.round.hand) == [] and list(view.round.legal) == []
    for watcher in (None, 0):
        assert table_view(table, watcher).seats[1].role == ""
    host.decide_and_append(table_id, g.NextRound(), "next", "ann")
    state = host.load(table_id).game.round
    assert state is not None and state.round_no == 2
    assert state.previous_standings == () and not state.pending  # no exchange
    assert state.phase != "exchange"


def test_the_same_players_still_exchange(host: TableHost) -> None:
    table_id = seat_table(host, {0: "ann", 1: "bob"})
    finish_round(host, table_id)
    host.decide_and_append(table_id, g.NextRound(), "next", "ann")
    state = host.load(table_id).game.round
    assert state is not None and state.previous_standings != ()


def test_a_host_who_leaves_hands_the_role_to_the_next_person(host: TableHost) -> None:
    table_id = seat_table(host, {1: "ann", 3: "bob", 0: "cid"}, seats=5)
    assert host.load(table_id).host_player_id == "cid"
    host.decide_and_append(table_id, g.Leave(0), "cid-leaves", "cid")  # mid-round
    table = host.load(table_id)
    assert table.host_player_id == "ann"  # the next person after seat 0, not a bot
    assert host_changes(host, table_id) == [HostChanged("ann", "cid", automatic=True)]
    finish_round(host, table_id)
    host.decide_and_append(table_id, g.Leave(1), "ann-leaves", "ann")
    assert host.load(table_id).host_player_id == "bob"


def test_the_host_hands_the_role_to_a_person(host: TableHost) -> None:
    table_id = seat_table(host, {0: "ann", 2: "bob"})
    for seat, code in (
        (1, ErrorCode.HOST_MUST_BE_HUMAN),
        (0, ErrorCode.ALREADY_HOST),
        (7, ErrorCode.NO_SUCH_SEAT),
    ):
        with pytest.raises(Rejected) as refused:
            host.hand_over_host(table_id, seat, f"to-{seat}", "ann")
        assert refused.value.code == code and refused.value.reason
    assert host.load(table_id).host_player_id == "ann"  # nothing changed
    host.hand_over_host(table_id, 2, "to-bob", "ann")
    assert host.load(table_id).host_player_id == "bob"
    assert host_changes(host, table_id) == [HostChanged("bob", "ann", automatic=False)]
    assert host.hand_over_host(table_id, 2, "to-bob", "ann").events == 1  # a retry: once
    assert len(host_changes(host, table_id)) == 1


def test_a_host_who_stays_away_passes_the_role_and_the_audit_agrees(host: TableHost) -> None:
    table_id = "t1"  # in the lobby: ann hosts, bob sits at seat 2
    host.create(table_id, options_for("classic"), seat_count=4, host_player_id="ann")
    for seat, player in ((0, "ann"), (2, "bob")):
        command = g.SitDown(seat, player, display_name=player.title())
        host.decide_and_append(table_id, command, f"sit-{seat}", player)
    host.set_presence(table_id, SeatPresence(2, "gw-1", True), "bob-here", "bob")
    game = host.load(table_id).game
    moved = host.move_on(table_id, HOST_AWAY, game.game_no, game.round_no, "away", timer_key=0)
    assert moved.events == 1
    assert host.load(table_id).host_player_id == "bob"
    assert host_changes(host, table_id) == [HostChanged("bob", "ann", automatic=True)]
    with pytest.raises(Rejected) as stale:  # the same wait again: bob is here, nothing due
        host.move_on(table_id, HOST_AWAY, game.game_no, game.round_no, "again", timer_key=0)
    assert stale.value.code == ErrorCode.STALE
    report = verify_table(host._store.read_stream(stream_id(table_id)), now=datetime.now(UTC))
    assert report.problem is None, report.problem
