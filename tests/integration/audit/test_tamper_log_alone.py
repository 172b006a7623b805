"""The careful insider's edits that the log alone catches (issue 16, gaps 1-6).

Each edit is made with SQL on a recorded game and every hash recomputed, so
the hash chain holds; before these checks every one of them passed the audit.
The deleted final reveal is in ``test_tamper.py`` with the other deal edits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from president import audit
from president.hosting import events as ev
from president.hosting.streams import stream_id
from president.rules import game as g
from president.rules import round as rnd
from president.store import EventStore, StoredEvent, migrate
from president.store.columns import read_audited_stream
from president.store.schema import events as events_table
from tests.support.recorded_games import (
    Row,
    decoded,
    message_of,
    record,
    record_with_idle_person,
    record_with_people,
    rewrite,
    rewrite_metadata,
    rewrite_without,
    set_column,
)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    migrate(url)
    opened = EventStore.from_url(url)
    yield opened
    opened.close()


def problem(store: EventStore, table_id: str, **kwargs: Any) -> audit.Discrepancy:
    events, columns = read_audited_stream(store.engine, stream_id(table_id))
    report = audit.verify_table(events, columns=columns, **kwargs)
    assert report.problem is not None, "the audit missed the tampering"
    print(report.problem)  # what a person reads; shown with pytest -s
    return report.problem


def honest(store: EventStore, table_id: str) -> list[StoredEvent]:
    events, columns = read_audited_stream(store.engine, stream_id(table_id))
    report = audit.verify_table(events, columns=columns)
    assert report.ok, report.problem
    return events


def groups_of(events: list[StoredEvent], kind: type) -> list[tuple[int, int]]:
    """``(start, end)`` of the commands whose first event is a ``kind``."""
    return [
        (start, end)
        for start, end in audit.command_groups(events)
        if isinstance(audit.decode(events[start]), kind)
    ]


def first_of(events: list[StoredEvent], kind: type, after: int = 0) -> StoredEvent:
    return next(e for e in events if e.version > after and isinstance(audit.decode(e), kind))


def test_the_audited_read_gives_the_stores_events_and_columns(store: EventStore) -> None:
    """``read_audited_stream`` reads with the driver's cursor: the same events as the store's
    own read, and each row's command columns."""
    table = record(store, "house", seed=5, rounds=1)
    events, columns = read_audited_stream(store.engine, stream_id(table))
    assert events == store.read_stream(stream_id(table))
    assert all(type(e.payload) is bytes and type(e.metadata["time"]) is str for e in events)
    assert [row.version for row in columns] == [e.version for e in events]
    assert [row.command_id for row in columns] == [e.command_id for e in events]
    assert columns[0].command_seq == 0 and max(row.command_seq for row in columns) > 0


# --------------------------------------------------------------------------- gap 2: time
def test_time_that_runs_backwards_is_named(store: EventStore) -> None:
    table = record_with_idle_person(store, "house")
    events = honest(store, table)
    target = first_of(events, rnd.TimedOut)  # the clock moved before it
    before = datetime.fromisoformat(events[target.version - 2].time)
    earlier = (before - timedelta(seconds=5)).isoformat()

    def change(row: Row, metadata: dict[str, Any]) -> None:
        metadata["time"] = earlier

    rewrite_metadata(store.engine, stream_id(table), [target.version], change)
    found = problem(store, table)
    assert (found.version, found.event_type) == (target.version, "TimedOut")
    assert "5 s before the time of version" in found.reason
    assert "time never goes backwards" in found.reason


@pytest.mark.parametrize(("preset", "timer"), [("house", "turn"), ("house-rapid", "rapid")])
def test_a_timeout_before_its_deadline_is_named(store: EventStore, preset: str, timer: str) -> None:
    """A timeout moved to 0.4 s after the event before it; every later time moved as much."""
    table = record_with_idle_person(store, preset, idle="play")
    events = honest(store, table)
    start, _ = groups_of(events, rnd.TimedOut)[0]
    timeout = events[start]
    before = datetime.fromisoformat(events[start - 1].time)
    shift = datetime.fromisoformat(timeout.time) - (before + timedelta(seconds=0.4))
    assert shift > timedelta(seconds=5)

    def change(row: Row, metadata: dict[str, Any]) -> None:
        metadata["time"] = (datetime.fromisoformat(metadata["time"]) - shift).isoformat()

    later = range(timeout.version, len(events) + 1)
    rewrite_metadata(store.engine, stream_id(table), later, change)
    found = problem(store, table)
    assert (found.version, found.event_type) == (timeout.version, "TimedOut")
    assert re.search(rf"a timeout [0-9.]+ s after the {timer} timer", found.reason)
    if timer == "turn":
        assert "a timeout 0.4 s after the turn timer of seat 0 started" in found.reason
    assert "cannot expire before" in found.reason


def test_an_exchange_timeout_before_its_deadline_is_named(store: EventStore) -> None:
    table = record_with_idle_person(store, "house", idle="exchange")
    events = honest(store, table)
    replayed = list(audit.replay_events(events))
    start = next(
        start
        for start, _ in groups_of(events, rnd.TimedOut)
        if (state := replayed[start - 1].game.round) is not None
        and state.phase == rnd.RoundPhase.EXCHANGE
    )
    timeout = events[start]
    exchange_began = next(
        e for e in reversed(events[:start]) if isinstance(audit.decode(e), rnd.RoundStarted)
    )
    shift = datetime.fromisoformat(timeout.time) - datetime.fromisoformat(exchange_began.time)

    def change(row: Row, metadata: dict[str, Any]) -> None:
        metadata["time"] = (datetime.fromisoformat(metadata["time"]) - shift).isoformat()

    rewrite_metadata(
        store.engine, stream_id(table), range(timeout.version, len(events) + 1), change
    )
    found = problem(store, table)
    assert (found.version, found.event_type) == (timeout.version, "TimedOut")
    assert "a timeout 0 s after the exchange timer" in found.reason


# --------------------------------------------------------------------------- gap 3: the actor
@pytest.mark.parametrize("forged", ["bot:strong", "bot:1", "server", "mallory"])
def test_a_play_by_another_actor_is_named(store: EventStore, forged: str) -> None:
    table = record(store, "house", seed=5, rounds=1)
    events = honest(store, table)
    start, end = groups_of(events, rnd.CardsPlayed)[0]
    seat = audit.decode(events[start]).seat  # type: ignore[attr-defined]
    # A bot's move is recorded as its level's account, not as its seat.
    assert events[start].metadata["actor"] == "bot:basic"

    def change(row: Row, metadata: dict[str, Any]) -> None:
        metadata["actor"] = forged

    rewrite_metadata(store.engine, stream_id(table), range(start + 1, end + 1), change)
    found = problem(store, table)
    assert (found.version, found.event_type) == (start + 1, "CardsPlayed")
    assert f"the play of seat {seat} names {forged!r} as its actor" in found.reason
    assert f"only its bot ('bot:basic') acts for seat {seat}" in found.reason


def test_a_persons_play_by_a_bot_is_named(store: EventStore) -> None:
    table = record_with_people(store)
    events = honest(store, table)
    start, end = next(
        (s, e)
        for s, e in groups_of(events, rnd.CardsPlayed)
        if events[s].metadata["actor"] == "bob"
    )

    def change(row: Row, metadata: dict[str, Any]) -> None:
        metadata["actor"] = "bot:4"

    rewrite_metadata(store.engine, stream_id(table), range(start + 1, end + 1), change)
    found = problem(store, table)
    assert found.version == start + 1
    assert "only 'bob', who sits there ('bob') acts for seat 4" in found.reason


def test_a_timeout_from_a_player_is_named(store: EventStore) -> None:
    table = record_with_idle_person(store, "house")
    events = honest(store, table)
    start, end = groups_of(events, rnd.TimedOut)[0]

    def change(row: Row, metadata: dict[str, Any]) -> None:
        metadata["actor"] = "bot:2"

    rewrite_metadata(store.engine, stream_id(table), range(start + 1, end + 1), change)
    found = problem(store, table)
    assert (found.version, found.event_type) == (start + 1, "TimedOut")
    assert "a timeout comes from the server, but the log names 'bot:2'" in found.reason


def test_a_host_action_by_someone_else_is_named(store: EventStore) -> None:
    table = record(store, "house", seed=5, rounds=2)
    events = honest(store, table)
    start, end = groups_of(events, g.NextRoundStarted)[0]

    def change(row: Row, metadata: dict[str, Any]) -> None:
        metadata["actor"] = "bot:0"

    rewrite_metadata(store.engine, stream_id(table), range(start + 1, end + 1), change)
    found = problem(store, table)
    assert found.version == start + 1
    assert "comes from the table's host, who is 'host' now, but the log names 'bot:0'" in (
        found.reason
    )


def test_one_command_naming_two_actors_is_named(store: EventStore) -> None:
    table = record(store, "house", seed=5, rounds=1)
    events = honest(store, table)
    _, end = next((s, e) for s, e in audit.command_groups(events) if e - s > 1)

    def change(row: Row, metadata: dict[str, Any]) -> None:
        metadata["actor"] = "mallory"

    rewrite_metadata(store.engine, stream_id(table), [end], change)
    found = problem(store, table)
    assert found.version == end
    assert "'mallory' differs from" in found.reason


# --------------------------------------------------------------------------- gap 4: hidden data
def test_an_extra_metadata_key_is_named(store: EventStore) -> None:
    table = record(store, "house", seed=5, rounds=1)
    target = honest(store, table)[20]

    def change(row: Row, metadata: dict[str, Any]) -> None:
        metadata["note"] = "seat 2 holds the 2 of spades"

    rewrite_metadata(store.engine, stream_id(table), [target.version], change)
    found = problem(store, table)
    assert found.version == target.version
    assert "its metadata holds keys no table service writes (note)" in found.reason


def test_an_unknown_protobuf_field_is_named(store: EventStore) -> None:
    table = record(store, "house", seed=5, rounds=1)
    target = first_of(honest(store, table), rnd.CardsPlayed, after=30)

    def edit(stored: list[Row]) -> list[Row]:
        row = stored[target.version - 1]
        row["payload"] = row["payload"] + bytes([0xF8, 0x07, 0x2A])  # field 127 = 42
        message_of(row)  # still parses
        return stored

    rewrite(store.engine, stream_id(table), edit)
    found = problem(store, table)
    assert (found.version, found.event_type) == (target.version, "CardsPlayed")
    assert "fields no reader knows" in found.reason


def test_a_rewritten_command_id_column_is_named(store: EventStore) -> None:
    """The careless insider needs no hash at all: the column is not hashed."""
    table = record(store, "house", seed=5, rounds=1)
    target = honest(store, table)[25]
    set_column(store.engine, stream_id(table), target.version, command_id="forged-command")

    found = problem(store, table)
    assert found.version == target.version
    assert "its command_id column says 'forged-command'" in found.reason


def test_a_rewritten_command_seq_column_is_named(store: EventStore) -> None:
    table = record(store, "house", seed=5, rounds=1)
    events = honest(store, table)
    start, _ = next((s, e) for s, e in audit.command_groups(events) if e - s > 1)
    stream = stream_id(table)
    set_column(store.engine, stream, start + 1, command_seq=-1)
    set_column(store.engine, stream, start + 2, command_seq=0)
    set_column(store.engine, stream, start + 1, command_seq=1)

    found = problem(store, table)
    assert found.version == start + 1
    assert "its command_seq column says 1, but it is event 0 of its command" in found.reason


def test_a_rewritten_tx_id_column_is_named(store: EventStore) -> None:
    table = record(store, "house", seed=5, rounds=1)
    events = honest(store, table)
    start, _ = next((s, e) for s, e in audit.command_groups(events) if e - s > 1)
    other = events[start].position.transaction + 7
    with store.engine.begin() as connection:
        connection.execute(
            events_table.update()
            .where(events_table.c.stream_id == stream_id(table))
            .where(events_table.c.version == start + 2)
            .values(tx_id=other)
        )

    found = problem(store, table)
    assert found.version == start + 2
    assert "the tx_id column was rewritten" in found.reason


# --------------------------------------------------------------------------- gap 5: anchors
def test_one_kept_hash_says_at_or_before(store: EventStore) -> None:
    table = record_with_people(store, seed=5)
    original = honest(store, table)
    last = original[-1]
    edited = first_of(original, rnd.CardsPlayed, after=20)

    # An edit the log alone cannot see: a reaction inserted, well-formed, early on.
    def insert(stored: list[Row]) -> list[Row]:
        row = dict(stored[edited.version - 1])
        from president.events.v1 import events_pb2 as pb

        metadata = json.loads(row["metadata"])
        row["type"] = "president.events.v1.ReactionShown"
        row["payload"] = pb.ReactionShown(seat=4, reaction="wave").SerializeToString(
            deterministic=True
        )  # from bob, seated in seat 4 all along (bots never react)
        row["metadata"] = json.dumps(
            {**metadata, "actor": "bob", "command_id": "inserted"},
            sort_keys=True,
            separators=(",", ":"),
        )
        row["command_id"], row["command_seq"] = "inserted", 0
        stored.insert(edited.version - 1, row)
        return stored

    rewrite(store.engine, stream_id(table), insert)
    assert audit.verify_table(store.read_stream(stream_id(table))).ok  # legal, hashes recomputed
    found = problem(store, table, anchors={last.version: last.hash})
    assert found.version == last.version
    assert "the log was rewritten at or before this event" in found.reason
    assert "rewritten from this event on" not in found.reason

    kept = {e.version: e.hash for e in original if e.version % 10 == 0 or e is last}
    found = problem(store, table, anchors=kept)
    below = max(v for v in kept if v < edited.version)
    above = min(v for v in kept if v >= edited.version)
    assert found.version == above
    assert f"at or before this event, after version {below} (whose kept hash matches)" in (
        found.reason
    )


# --------------------------------------------------------------------------- gap 6: words
def test_a_dropped_rapid_pass_is_named_as_missing(store: EventStore) -> None:
    table = record(store, "house-rapid", seed=4, rounds=1)
    events = honest(store, table)
    # A pass followed by another pass that closes the trick: drop the first.
    items = [audit.decode(e) for e in events]
    index = next(
        i
        for i in range(len(items) - 2)
        if isinstance(items[i], rnd.Passed)
        and events[i].command_id != events[i - 1].command_id
        and isinstance(items[i + 1], rnd.Passed)
        and isinstance(items[i + 2], rnd.TrickClosed)
    )
    dropped = items[index]
    rewrite_without(store.engine, stream_id(table), events[index].version)

    found = problem(store, table)
    assert f"a pass by seat {dropped.seat} is missing from the log" in found.reason  # type: ignore[attr-defined]


def test_changed_places_read_as_english(store: EventStore) -> None:
    table = record(store, "house", seed=5, rounds=1)
    ended = first_of(honest(store, table), rnd.RoundEnded)

    def edit(stored: list[Row]) -> list[Row]:
        row = stored[ended.version - 1]
        message = message_of(row)
        message.standings[0], message.standings[1] = message.standings[1], message.standings[0]
        row["payload"] = message.SerializeToString(deterministic=True)
        return stored

    rewrite(store.engine, stream_id(table), edit)
    found = problem(store, table)
    assert found.version == ended.version
    assert "the places are [" in found.reason
    assert "the places is" not in found.reason


def test_deals_and_reveals_come_from_the_server(store: EventStore) -> None:
    table = record(store, "house", seed=5, rounds=1)
    revealed = next(e for e, item in decoded(store, table) if isinstance(item, ev.DealRevealed))

    def change(row: Row, metadata: dict[str, Any]) -> None:
        metadata["actor"] = "host"

    rewrite_metadata(store.engine, stream_id(table), [revealed.version], change)
    found = problem(store, table)
    assert (found.version, found.event_type) == (revealed.version, "DealRevealed")
    assert "a deal's reveal comes from the server, but the log names 'host'" in found.reason
