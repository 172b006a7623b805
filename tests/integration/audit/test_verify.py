"""Recorded games verify, round by round, on SQLite and PostgreSQL; rounds replay as scenarios."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from president import audit
from president.events.v1 import events_pb2 as pb
from president.hosting.blinding import BLIND, blinding_value
from president.hosting.streams import stream_id
from president.play.recorded import seeded_host
from president.rules import game as g
from president.rules.options import PRESETS, options_for
from president.rules.scenario import run_scenario
from president.store import EventStore, NewEvent, StoredEvent, migrate
from tests.support.recorded_games import record, record_with_people


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    migrate(url)
    opened = EventStore.from_url(url)
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def pg_store(postgres_url: str) -> Iterator[EventStore]:
    migrate(postgres_url)
    opened = EventStore.from_url(postgres_url)
    yield opened
    opened.close()


def read(store: EventStore, table_id: str) -> list[StoredEvent]:
    return store.read_stream(stream_id(table_id))


def assert_all_verified(events: list[StoredEvent], rounds: int | None = None) -> audit.TableReport:
    report = audit.verify_table(events)
    assert report.ok, report.problem
    assert report.events_verified == report.events == len(events)
    assert all(item.status == audit.VERIFIED for item in report.rounds)
    if rounds is not None:
        assert len(report.rounds) == rounds
    for item in report.rounds:
        assert item.committed_at < (item.dealt_at or 0) < (item.ended_at or 0)
        assert (item.ended_at or 0) < (item.revealed_at or 0)
    return report


@pytest.mark.parametrize("preset", PRESETS)
def test_a_recorded_game_of_every_preset_verifies(store: EventStore, preset: str) -> None:
    report = assert_all_verified(read(store, record(store, preset)), rounds=3)
    assert report.games == 1
    assert report.table_id and report.stream_id == f"table-{report.table_id}"


@pytest.mark.parametrize("preset", ["classic", "club"])
def test_a_whole_game_to_the_rules_end_verifies(store: EventStore, preset: str) -> None:
    events = read(store, record(store, preset, seed=3, rounds=None))
    report = assert_all_verified(events)
    assert len(report.rounds) >= 5
    assert events[-1].type.endswith(".DealRevealed")


def test_leaving_mid_round_and_timeouts_verify(store: EventStore) -> None:
    events = read(store, record_with_people(store))
    types = [event.type.rsplit(".", 1)[-1] for event in events]
    assert "SeatLeft" in types and "TimedOut" in types and "SeatFreed" in types
    actors = {str(event.metadata["actor"]) for event in events}
    assert {"alice", "bob", "server"} <= actors
    assert_all_verified(events, rounds=3)


@pytest.mark.postgres
@pytest.mark.parametrize("preset", ["house", "traditional"])
def test_recorded_games_verify_on_postgresql(pg_store: EventStore, preset: str) -> None:
    assert_all_verified(read(pg_store, record(pg_store, preset, seed=9)), rounds=3)


@pytest.mark.postgres
def test_leaving_and_timeouts_verify_on_postgresql(pg_store: EventStore) -> None:
    assert_all_verified(read(pg_store, record_with_people(pg_store, seed=8)), rounds=3)


def test_every_prefix_that_ends_between_commands_verifies(store: EventStore) -> None:
    """A log read while the game goes on: the last round is in progress, not a failure."""
    events = read(store, record_with_people(store, seed=11))
    statuses: set[str] = set()
    for _, end in audit.command_groups(events):
        report = audit.verify_table(events[:end])
        assert report.ok, (end, report.problem)
        assert report.rounds_in_progress <= 1
        statuses.update(item.status for item in report.rounds)
    assert statuses == {audit.VERIFIED, audit.IN_PROGRESS}


def test_a_log_cut_inside_a_command_is_named(store: EventStore) -> None:
    """An append is atomic: a command whose events stop half-way is a bad log."""
    events = read(store, record(store, "club", seed=2, rounds=1))
    end = next(
        end
        for start, end in audit.command_groups(events)
        if end - start >= 2 and events[start].type.endswith(".CardsPlayed")
    )
    report = audit.verify_table(events[: end - 1])
    assert report.problem is not None
    assert report.problem.version == events[end - 2].version
    assert "which the log lacks" in report.problem.reason
    assert report.events_verified == end - 2


def test_an_empty_log_is_not_a_table() -> None:
    report = audit.verify_table([])
    assert not report.ok
    assert report.problem is not None and "empty" in report.problem.reason


# --------------------------------------------------------------------------- scenarios
def test_each_round_replays_as_a_scenario_with_the_stored_outcome(store: EventStore) -> None:
    tables = [record(store, preset, seed=4) for preset in PRESETS]
    tables.append(record_with_people(store, seed=5))
    compacted = 0
    for table_id in tables:
        events = read(store, table_id)
        report = assert_all_verified(events)
        scenarios = audit.round_scenarios(events)
        assert [(s.game_no, s.round_no) for s in scenarios] == [
            (r.game_no, r.round_no) for r in report.rounds
        ]
        for item in scenarios:
            assert item.secret_hex is not None and item.fingerprint is not None
            # Through JSON, as a person or another implementation would read it.
            scenario = json.loads(json.dumps(item.scenario))
            trace = run_scenario(scenario)
            assert all(line["ok"] for line in trace), [line for line in trace if not line["ok"]]
            assert item.ended is not None
            last = trace[-1]
            assert last["phase"] == "over"
            assert last["standings"] == list(item.ended.standings)
            assert last["points"] == list(item.ended.points)
            assert last["totals"] == list(item.ended.totals)
            assert last["game_over"] == item.ended.game_over
            compacted += item.seats != tuple(range(len(item.seats)))
    assert compacted  # the people's table has an empty seat: scenario seats are renumbered


def test_a_newcomer_between_rounds_verifies_and_replays(store: EventStore) -> None:
    """A player sits down between rounds: no standings carry over, so no exchange."""
    host, _ = seeded_host(store, 6)
    table_id = "newcomer"
    host.create(table_id, options_for("club"), seat_count=5, host_player_id="host")
    for seat in range(4):
        host.decide_and_append(table_id, g.SitDown(seat, f"b{seat}", True), f"n/sit-{seat}", "host")
    host.decide_and_append(table_id, g.StartGame(), "n/start", "host")
    host.decide_and_append(table_id, g.SitDown(4, "late", True), "n/sit-4", "host")
    host.decide_and_append(table_id, g.NextRound(), "n/next", "host")
    host.decide_and_append(table_id, g.EndGame(), "n/end", "host")
    events = read(store, table_id)
    assert_all_verified(events, rounds=2)
    second = audit.round_scenarios(events)[1]
    assert second.scenario["round"] == 2 and second.scenario["previous_standings"] == []
    assert len(second.seats) == 5
    trace = second.trace()
    assert all(line["ok"] for line in trace)
    assert second.ended is not None and trace[-1]["points"] == list(second.ended.points)


def test_reactions_are_checked_on_their_own_terms(store: EventStore) -> None:
    table_id = record_with_people(store)
    stream = stream_id(table_id)

    def react(seat: int, command_id: str) -> None:
        message = pb.ReactionShown(seat=seat, reaction="thumbs_up")
        version = store.current_version(stream)
        actor = {"actor": "bob", BLIND: blinding_value()}  # the person seated in seat 4
        store.append(stream, version, [NewEvent.from_message(message, actor)], command_id)

    react(4, "react-1")
    assert_all_verified(read(store, table_id))
    react(7, "react-2")  # no such seat
    report = audit.verify_table(read(store, table_id))
    assert report.problem is not None
    assert report.problem.event_type == "ReactionShown"
    assert "where nobody sits" in report.problem.reason


def test_presence_reports_come_from_the_person_seated_there(store: EventStore) -> None:
    table_id = record_with_people(store)
    stream = stream_id(table_id)

    def report(seat: int, actor: str, command_id: str) -> None:
        message = pb.SeatPresence(seat=seat, gateway="g1", connected=True)
        version = store.current_version(stream)
        event = NewEvent.from_message(message, {"actor": actor, BLIND: blinding_value()})
        store.append(stream, version, [event], command_id)

    report(4, "bob", "here-1")  # bob sits in seat 4
    assert_all_verified(read(store, table_id))
    report(4, "alice", "here-2")  # alice reports for bob's seat
    report_ = audit.verify_table(read(store, table_id))
    assert report_.problem is not None
    assert report_.problem.event_type == "SeatPresence"
    assert "names 'alice' as its actor" in report_.problem.reason
