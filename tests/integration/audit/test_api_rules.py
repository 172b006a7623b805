"""What the API refuses, the audit refuses in a stored log, by the very same rules
(:mod:`president.hosting.input_rules`); and what the log holds is printed safely.

An insider writes each case into a recorded game's log through the store (every
hash right): a reaction code the gateway refuses, a reaction from a bot's seat,
a chat message the gateway refuses (too long, control characters, not normalised),
one from a muted person or written by the server, a command id longer than the
table service takes or holding control characters, a burst of reactions or chat
messages over a seat's rate at their stored times.
``audit verify`` refuses each, naming the event; ``audit replay`` shows a stored
string's escape sequences and bidi controls written out, never raw.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from president import audit
from president.cli.main import app
from president.events.v1 import events_pb2 as pb
from president.hosting.blinding import BLIND, blinding_value
from president.hosting.input_rules import CHAT_MAX, MAX_STORED_COMMAND_ID
from president.hosting.seat_rates import CHAT, REACTIONS
from president.hosting.streams import stream_id
from president.store import EventStore, NewEvent, migrate
from tests.support.recorded_games import record_with_people, rewrite_metadata

#: ESC, an OSC 8 link, a bell, a right-to-left override: what a terminal obeys.
HOSTILE = "\x1b[2J\x1b]8;;https://evil.example\x07click\x1b]8;;\x07\u202eevil"
RAW = ("\x1b", "\x07", "\u202e")


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'audit.db'}"


@pytest.fixture
def store(db: str) -> Iterator[EventStore]:
    migrate(db)
    events = EventStore.from_url(db)
    yield events
    events.close()


def forge(
    store: EventStore,
    table_id: str,
    message: object,
    actor: str,
    command_id: str,
    time: datetime | None = None,
) -> int:
    """Append ``message`` as a command of its own, as the table service writes one, stored
    at ``time`` (None: now)."""
    stream = stream_id(table_id)
    version = store.current_version(stream)
    event = NewEvent.from_message(message, {"actor": actor, BLIND: blinding_value()})  # type: ignore[arg-type]
    store.append(stream, version, [event], command_id, time=time)
    return version + 1


def after_the_game(store: EventStore, table_id: str) -> datetime:
    """A minute after the table's last stored time: forged times never go backwards."""
    last = store.read_stream(stream_id(table_id))[-1]
    return datetime.fromisoformat(last.time) + timedelta(minutes=1)


def refusal(store: EventStore, table_id: str) -> audit.Discrepancy:
    report = audit.verify_table(store.read_stream(stream_id(table_id)))
    assert report.problem is not None
    return report.problem


@pytest.mark.parametrize(
    "code",
    [HOSTILE + "x" * 100_000, "Thumbs Up", "thumbs_up\n", "x" * 33, ""],
    ids=["100KB-with-escapes", "spaces-and-capitals", "trailing-newline", "too-long", "empty"],
)
def test_a_reaction_code_the_gateway_refuses_is_refused(store: EventStore, code: str) -> None:
    table_id = record_with_people(store)
    forge(store, table_id, pb.ReactionShown(seat=4, reaction="thumbs_up"), "bob", "fine")
    assert audit.verify_table(store.read_stream(stream_id(table_id))).ok  # a good one passes
    version = forge(store, table_id, pb.ReactionShown(seat=4, reaction=code), "bob", "forged")
    problem = refusal(store, table_id)
    assert (problem.version, problem.event_type) == (version, "ReactionShown")
    assert "lowercase letters, digits or _" in problem.reason
    assert not any(char in problem.reason for char in RAW)


def test_a_reaction_from_a_bots_seat_is_refused(store: EventStore) -> None:
    table_id = record_with_people(store)
    version = forge(store, table_id, pb.ReactionShown(seat=0, reaction="wave"), "Bot A", "bot")
    problem = refusal(store, table_id)
    assert (problem.version, problem.event_type) == (version, "ReactionShown")
    assert "where a bot sits" in problem.reason


@pytest.mark.parametrize(
    "text",
    [HOSTILE, "x" * (CHAT_MAX + 1), "line\nbreak", " padded", "ｗｉｄｅ", "\u200b"],
    ids=["escapes-and-bidi", "one-too-long", "newline", "untrimmed", "not-nfkc", "invisible"],
)
def test_a_chat_message_the_gateway_refuses_is_refused(store: EventStore, text: str) -> None:
    table_id = record_with_people(store)
    forge(store, table_id, pb.ChatPosted(seat=4, text="x" * CHAT_MAX), "bob", "fine")
    assert audit.verify_table(store.read_stream(stream_id(table_id))).ok  # the longest taken
    version = forge(store, table_id, pb.ChatPosted(seat=4, text=text), "bob", "forged")
    problem = refusal(store, table_id)
    assert (problem.version, problem.event_type) == (version, "ChatPosted")
    assert "a chat message" in problem.reason and "the API refuses" in problem.reason
    assert not any(char in problem.reason for char in RAW)


def test_a_muted_persons_chat_and_the_servers_are_refused(store: EventStore) -> None:
    table_id = record_with_people(store)
    forge(
        store,
        table_id,
        pb.SeatTaken(seat=2, player_id="carol", display_name="Carol"),
        "carol",
        "sit",
    )
    forge(store, table_id, pb.ChatPosted(seat=2, text="hi"), "carol", "hi")
    forge(store, table_id, pb.SeatMuted(seat=2, player_id="carol", muted=True), "bob", "mute")
    assert audit.verify_table(store.read_stream(stream_id(table_id))).ok
    version = forge(store, table_id, pb.ChatPosted(seat=2, text="still here"), "carol", "muted")
    problem = refusal(store, table_id)
    assert (problem.version, problem.event_type) == (version, "ChatPosted")
    assert "whose person the host muted" in problem.reason


@pytest.mark.parametrize(
    ("message", "actor", "words"),
    [
        (pb.ChatPosted(seat=4, text="a hint"), "server", "names 'server' as its actor"),
        (
            pb.SeatMuted(seat=1, player_id="alice", muted=True),
            "alice",
            "comes from the table's host",
        ),
        (pb.SeatMuted(seat=4, player_id="bob", muted=True), "bob", "mutes their own seat"),
        (pb.SeatMuted(seat=0, player_id="Bot A", muted=True), "bob", "not the person in seat 0"),
    ],
    ids=["server-chat", "not-host", "own-seat", "bot"],
)
def test_a_chat_or_mute_from_the_wrong_actor_is_refused(
    store: EventStore, message: object, actor: str, words: str
) -> None:
    table_id = record_with_people(store)
    version = forge(store, table_id, message, actor, "forged")
    problem = refusal(store, table_id)
    assert problem.version == version and words in problem.reason


@pytest.mark.parametrize(
    "command_id",
    ["c" * 4096, "c" * (MAX_STORED_COMMAND_ID + 1), "id\x1b]8;;x\x07", "id\u202e"],
    ids=["4KB", "one-too-long", "escape", "bidi"],
)
def test_a_command_id_the_table_service_refuses_is_refused(
    store: EventStore, command_id: str
) -> None:
    table_id = record_with_people(store)
    forge(store, table_id, pb.ReactionShown(seat=4, reaction="wave"), "bob", "c" * 120)
    assert audit.verify_table(store.read_stream(stream_id(table_id))).ok  # the longest taken
    version = forge(store, table_id, pb.ReactionShown(seat=4, reaction="wave"), "bob", "short")

    def rename(row: dict[str, Any], metadata: dict[str, Any]) -> None:
        """The insider writes the id past the store's own check, in both places."""
        row["command_id"] = metadata["command_id"] = command_id

    rewrite_metadata(store.engine, stream_id(table_id), [version], rename)
    problem = refusal(store, table_id)
    assert (problem.version, problem.event_type) == (version, "ReactionShown")
    assert "command id" in problem.reason and "printable characters" in problem.reason
    assert command_id not in problem.reason


def test_verify_on_the_command_line_exits_1_naming_the_event(store: EventStore, db: str) -> None:
    table_id = record_with_people(store)
    version = forge(store, table_id, pb.ReactionShown(seat=4, reaction=HOSTILE), "bob", "osc")
    result = CliRunner().invoke(app, ["audit", "verify", "--db", db, "--table", table_id])
    assert result.exit_code == 1
    assert f"version {version}" in result.output and "ReactionShown" in result.output
    assert not any(char in result.output for char in RAW)


def test_replay_prints_stored_strings_with_their_escapes_written_out(
    store: EventStore, db: str
) -> None:
    """A presence report's gateway name is free text the log keeps: the replay shows its
    escape sequences and bidi control as escapes, never raw."""
    table_id = record_with_people(store)
    forge(store, table_id, pb.SeatPresence(seat=4, gateway=HOSTILE, connected=True), "bob", "p")
    assert audit.verify_table(store.read_stream(stream_id(table_id))).ok
    result = CliRunner().invoke(app, ["audit", "replay", "--db", db, "--table", table_id])
    assert result.exit_code == 0, result.output
    assert not any(char in result.output for char in RAW)
    assert "\\x1b]8;;https://evil.example\\x07click" in result.output
    assert "\\u202eevil" in result.output


def test_a_burst_of_reactions_over_the_rate_is_refused(store: EventStore) -> None:
    """Six reactions of one seat within 10 s of stored time: the sixth breaks the rate the
    table service refuses REACTION_RATE (another seat's reactions do not count)."""
    table_id = record_with_people(store)
    start = after_the_game(store, table_id)
    wave = pb.ReactionShown(seat=4, reaction="wave")
    for n in range(REACTIONS.burst):
        forge(store, table_id, wave, "bob", f"r{n}", start + timedelta(seconds=n))
    assert audit.verify_table(store.read_stream(stream_id(table_id))).ok
    at = start + REACTIONS.window - timedelta(milliseconds=1)
    version = forge(store, table_id, wave, "bob", "burst", at)
    problem = refusal(store, table_id)
    assert (problem.version, problem.event_type) == (version, "ReactionShown")
    assert "seat 4 has more than 5 reactions within 10 seconds" in problem.reason
    assert "REACTION_RATE" in problem.reason


def test_reactions_spread_over_time_are_accepted(store: EventStore) -> None:
    """Twelve reactions 2 s apart: no 10 s holds more than five (the sixth comes 10 s after
    the first, the rate's edge), so the log passes."""
    table_id = record_with_people(store)
    start = after_the_game(store, table_id)
    wave = pb.ReactionShown(seat=4, reaction="wave")
    for n in range(12):
        forge(store, table_id, wave, "bob", f"r{n}", start + timedelta(seconds=2 * n))
    assert audit.verify_table(store.read_stream(stream_id(table_id))).ok


def test_a_burst_of_chat_messages_over_the_rate_is_refused(store: EventStore) -> None:
    """Four chat messages, a reaction (counted apart), then a fifth message within 10 s:
    refused as the table service refuses it CHAT_RATE."""
    table_id = record_with_people(store)
    start = after_the_game(store, table_id)
    for n in range(CHAT.burst):
        message = pb.ChatPosted(seat=4, text=f"hi {n}")
        forge(store, table_id, message, "bob", f"c{n}", start + timedelta(seconds=n))
    wave = pb.ReactionShown(seat=4, reaction="wave")
    forge(store, table_id, wave, "bob", "r", start + timedelta(seconds=5))
    assert audit.verify_table(store.read_stream(stream_id(table_id))).ok
    late = pb.ChatPosted(seat=4, text="one more")
    version = forge(store, table_id, late, "bob", "burst", start + timedelta(seconds=6))
    problem = refusal(store, table_id)
    assert (problem.version, problem.event_type) == (version, "ChatPosted")
    assert "more than 4 chat messages within 10 seconds" in problem.reason
