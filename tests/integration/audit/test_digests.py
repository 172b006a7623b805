"""A command's digest is its own: the audit recomputes it from the log and refuses any other.

The table service keeps each command's digest with its events, to refuse a
retried command id with other content (:mod:`president.hosting.retries`). An
insider who writes chosen bytes there (96 bits an event) or another command's
digest, and recomputes every hash, is named by ``audit verify``; every honest
log verifies: every kind of command a table takes, in turn-based and rapid play,
and logs of the first format (Python's ``repr``), which a retry still matches.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from president import audit, codec
from president.cli.main import app
from president.hosting import host as host_module
from president.hosting.commands import (
    Chat,
    MuteSeat,
    digest_of,
    digest_terms,
    legacy_digest_of,
)
from president.hosting.errors import CommandConflict
from president.hosting.events import SeatPresence
from president.hosting.host import TableHost
from president.hosting.move_on import AFTER_GAME_KEY, BETWEEN_ROUNDS, CLOSING, HOST_AWAY
from president.hosting.retries import DIGEST, command_digest, digest_input
from president.hosting.streams import stream_id
from president.play.recorded import seeded_host, wait_for_timer
from president.rules import bots
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import mask_of
from president.rules.options import options_for
from president.store import EventStore, StoredEvent, migrate
from tests.support.recorded_games import PRESET_PLAYERS, record_with_people, rewrite_metadata

DOCS = Path(__file__).resolve().parents[3] / "docs" / "auditing.md"
CHOSEN = "0123456789abcdef01234567"  # 24 hex digits: the old audit took any


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'audit.db'}"


@pytest.fixture
def store(db: str) -> Iterator[EventStore]:
    migrate(db)
    events = EventStore.from_url(db)
    yield events
    events.close()


def read(store: EventStore, table_id: str) -> list[StoredEvent]:
    return store.read_stream(stream_id(table_id))


def play_a_round(host: TableHost, clock: Any, table_id: str, people: dict[int, str]) -> None:
    """The people move naming the trick version they answer (as the table service does), or
    let the timer run out every third time; bots move by themselves."""
    step = 0
    while True:
        table = host.load(table_id)
        game, state = table.game, table.game.round
        if game.phase != g.GamePhase.ROUND or state is None:
            return
        step += 1
        key = f"{table_id}/{table.version}"
        mover = next((seat for seat in people if _owes(state, seat)), None)
        command = bots.choose_action(state, mover) if mover is not None else None
        if command is None or step % 3 == 0:
            wait_for_timer(table, clock)
            host.timeout(table_id, state.timer_key, game.game_no, game.round_no)
            continue
        if isinstance(command, rnd.PlayCards | rnd.Pass):
            command = command._replace(version=state.trick_version)
        assert mover is not None
        host.decide_and_append(table_id, command, f"{key}/move", people[mover])


def _owes(state: rnd.RoundState, seat: int) -> bool:
    if state.phase == rnd.RoundPhase.EXCHANGE:
        return any(owed.giver == seat for owed in state.pending)
    return state.phase == rnd.RoundPhase.PLAY and state.to_act == seat


def every_kind_of_command(store: EventStore, preset: str) -> str:
    """A table where two people (ann hosts, bob) and bots send every kind of command the
    table takes, some through the server's MoveOn; returns its id."""
    table_id = f"kinds-{preset}"
    host, clock = seeded_host(store, 5)
    seats = PRESET_PLAYERS[preset]
    host.create(table_id, options_for(preset), seat_count=seats, host_player_id="ann")
    people = {0: "ann", 1: "bob"}
    host.decide_and_append(table_id, g.SitDown(0, "ann", display_name="Ann"), "sit-0", "ann")
    host.decide_and_append(table_id, g.SitDown(1, "bob"), "sit-1", "bob")  # no display name
    for seat in range(2, seats):
        host.decide_and_append(table_id, g.SitDown(seat, f"b{seat}", True), f"sit-{seat}", "ann")
    host.set_presence(table_id, SeatPresence(1, "gw-1", True), "bob-here", "bob")
    host.append_reaction(table_id, 0, "wave", "wave", "ann")
    host.decide_and_append(table_id, Chat(1, "hello ☺"), "chat", "bob")
    host.decide_and_append(table_id, MuteSeat(1, True), "mute", "ann")
    host.decide_and_append(table_id, MuteSeat(1, False), "unmute", "ann")
    host.decide_and_append(table_id, g.StartGame(), "start", "ann")
    play_a_round(host, clock, table_id, people)
    game = host.load(table_id).game
    # The server moves on: the next round, or the end of a game of unlimited rounds.
    host.move_on(table_id, BETWEEN_ROUNDS, game.game_no, game.round_no, "server-next")
    play_a_round(host, clock, table_id, people)
    if host.load(table_id).game.phase == g.GamePhase.BETWEEN_ROUNDS:
        host.decide_and_append(table_id, g.EndGame(), "end", "ann")
    host.decide_and_append(table_id, g.PlayAgain(), "again", "ann")
    play_a_round(host, clock, table_id, people)
    host.decide_and_append(table_id, g.EndGame(), "end-again", "ann")
    game = host.load(table_id).game
    host.move_on(table_id, BETWEEN_ROUNDS, game.game_no, game.round_no, "lobby", AFTER_GAME_KEY)
    host.hand_over_host(table_id, 1, "to-bob", "ann")
    host.set_presence(table_id, SeatPresence(0, "gw-1", True), "ann-here", "ann")
    host.set_presence(table_id, SeatPresence(1, "gw-1", False), "bob-away", "bob")
    game = host.load(table_id).game
    host.move_on(table_id, HOST_AWAY, game.game_no, game.round_no, "away", timer_key=1)
    host.decide_and_append(table_id, g.Leave(1), "bob-leaves", "bob")
    host.decide_and_append(table_id, g.Leave(0), "ann-leaves", "ann")
    game = host.load(table_id).game
    host.move_on(table_id, CLOSING, game.game_no, game.round_no, "close")
    return table_id


def _kind_of(event: object) -> str:
    names = {
        "CardsPlayed": "play_cards",
        "Passed": "pass",
        "CardsGiven": "return_cards",
        "TimedOut": "timeout",
        "SeatTaken": "sit_down",
        "SeatLeft": "leave",
        "GameStarted": "start_game/play_again",
        "NextRoundStarted": "next_round",
        "SeatsChanged": "next_round",
        "GameEnded": "end_game",
        "ReturnedToLobby": "back_to_lobby",
        "ReactionShown": "react",
        "ChatPosted": "chat",
        "SeatMuted": "mute_seat",
        "HostChanged": "host_changed",
        "SeatPresence": "set_presence",
        "TableClosed": "close",
    }
    return names.get(type(event).__name__, type(event).__name__)


@pytest.mark.parametrize("preset", ["classic", "house-rapid"])
def test_every_kind_of_command_verifies_with_its_own_digest(store: EventStore, preset: str) -> None:
    events = read(store, every_kind_of_command(store, preset))
    report = audit.verify_table(events)
    assert report.ok, report.problem
    assert report.events_verified == len(events)
    kinds = {_kind_of(codec.decode(e.type, e.payload)) for e in events if DIGEST in e.metadata}
    rapid = {"play_cards", "timeout", "sit_down", "leave", "start_game/play_again", "end_game"}
    rapid |= {"back_to_lobby", "react", "chat", "mute_seat", "host_changed", "set_presence"}
    rapid.add("close")
    expected = rapid if preset == "house-rapid" else rapid | {"pass", "next_round", "return_cards"}
    assert kinds >= expected, expected - kinds
    hosts = [codec.decode(e.type, e.payload) for e in events if e.type.endswith("HostChanged")]
    assert {change.automatic for change in hosts} == {False, True}  # handed over, passed on


def victims(events: list[StoredEvent]) -> dict[str, StoredEvent]:
    """One event of each sort an insider might hide data in."""

    def first(test: Any) -> StoredEvent:
        return next(event for event in events if test(event))

    def named(kind: str, digested: bool | None = True) -> StoredEvent:
        return first(
            lambda e: (
                e.type.endswith(kind) and (digested is None or (DIGEST in e.metadata) == digested)
            )
        )

    return {
        "a-persons-play": named("CardsPlayed"),
        "a-bots-play": named("CardsPlayed", digested=False),
        "a-timeout": named("TimedOut"),
        "a-sitting-down": named("SeatTaken"),
        "the-creation": named("TableCreated", digested=False),
        "a-commitment": named("DealCommitted", digested=False),
        "an-end-of-trick": first(lambda e: e.type.endswith("TrickClosed") and DIGEST in e.metadata),
    }


@pytest.mark.parametrize(
    "victim",
    [
        "a-persons-play",
        "a-bots-play",
        "a-timeout",
        "a-sitting-down",
        "the-creation",
        "a-commitment",
        "an-end-of-trick",
    ],
)
def test_a_digest_of_chosen_bytes_is_refused_naming_the_event(
    store: EventStore, victim: str
) -> None:
    table_id = record_with_people(store)
    stream = stream_id(table_id)
    assert audit.verify_table(read(store, table_id)).ok
    target = victims(read(store, table_id))[victim]

    def hide(row: dict[str, Any], metadata: dict[str, Any]) -> None:
        metadata[DIGEST] = CHOSEN

    rewrite_metadata(store.engine, stream, [target.version], hide)
    report = audit.verify_table(read(store, table_id))
    assert report.problem is not None
    assert report.problem.version == target.version
    assert report.problem.event_type == target.type.rsplit(".", 1)[-1]
    assert "digest" in report.problem.reason and "hidden" in report.problem.reason


def test_another_commands_digest_is_refused(store: EventStore) -> None:
    """The digest of a play of other cards, or of the same play by another actor, is as
    foreign to the play as chosen bytes."""
    table_id = record_with_people(store)
    stream = stream_id(table_id)
    events = read(store, table_id)
    play = next(e for e in events if e.type.endswith("CardsPlayed") and DIGEST in e.metadata)
    played = codec.decode(play.type, play.payload)
    actor = play.metadata["actor"]
    own = digest_of(rnd.PlayCards(played.seat, played.cards), actor)
    assert play.metadata[DIGEST] == own
    for other in (
        digest_of(rnd.PlayCards(played.seat, mask_of("RJ")), actor),
        digest_of(rnd.PlayCards(played.seat, played.cards), "someone-else"),
        digest_of(rnd.Pass(played.seat), actor),
    ):

        def swap(row: dict[str, Any], metadata: dict[str, Any], other: str = other) -> None:
            metadata[DIGEST] = other

        rewrite_metadata(store.engine, stream, [play.version], swap)
        problem = audit.verify_table(read(store, table_id)).problem
        assert problem is not None and problem.version == play.version
        assert "not that of its own command" in problem.reason


def test_verify_on_the_command_line_exits_1_naming_the_event(store: EventStore, db: str) -> None:
    table_id = record_with_people(store)
    play = next(e for e in read(store, table_id) if DIGEST in e.metadata and e.version > 20)

    def hide(row: dict[str, Any], metadata: dict[str, Any]) -> None:
        metadata[DIGEST] = CHOSEN

    rewrite_metadata(store.engine, stream_id(table_id), [play.version], hide)
    result = CliRunner().invoke(app, ["audit", "verify", "--db", db, "--table", table_id])
    assert result.exit_code == 1
    assert f"version {play.version}" in result.output
    assert "command digest" in result.output


def test_a_log_of_the_first_format_verifies_and_its_retries_still_match(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stored before this definition, a log carries ``repr`` digests: it verifies (every
    play and pass named its trick version, as the table service sends them), a retry of its
    commands gets their first outcome, and one with other content is still refused."""
    monkeypatch.setattr(host_module, "digest_of", legacy_digest_of)
    table_id = every_kind_of_command(store, "classic")
    events = read(store, table_id)
    assert any(
        DIGEST in e.metadata and e.type.endswith("CardsPlayed") for e in events
    )  # the old format holds the trick version, which the log does not
    report = audit.verify_table(events)
    assert report.ok, report.problem
    monkeypatch.undo()
    host, _ = seeded_host(store, 5)
    assert host.hand_over_host(table_id, 1, "to-bob", "ann").events == 1  # its first outcome
    with pytest.raises(CommandConflict):
        host.hand_over_host(table_id, 0, "to-bob", "ann")
    with pytest.raises(CommandConflict):
        host.hand_over_host(table_id, 1, "to-bob", "bob")


def test_a_first_format_digest_after_the_current_one_is_refused(store: EventStore) -> None:
    table_id = record_with_people(store)
    events = read(store, table_id)
    last = [e for e in events if DIGEST in e.metadata and e.type.endswith("CardsPlayed")][-1]
    played = codec.decode(last.type, last.payload)
    old = legacy_digest_of(rnd.PlayCards(played.seat, played.cards), last.metadata["actor"])

    def downgrade(row: dict[str, Any], metadata: dict[str, Any]) -> None:
        metadata[DIGEST] = old

    rewrite_metadata(store.engine, stream_id(table_id), [last.version], downgrade)
    problem = audit.verify_table(read(store, table_id)).problem
    assert problem is not None and problem.version == last.version
    assert "first format" in problem.reason


def test_the_definitions_worked_example_in_the_docs() -> None:
    """docs/auditing.md spells the digest out on one play: its bytes and its value."""
    command = rnd.PlayCards(2, mask_of("3C 3H"), version=7)
    kind, fields = digest_terms(command)
    assert (kind, fields) == ("play_cards", (2, "3C 3H"))
    data = digest_input("alice", kind, fields)
    assert data == b"26:president/command-digest/2,5:alice,10:play_cards,1:2,5:3C 3H,"
    digest = command_digest("alice", kind, fields)
    assert (
        digest == digest_of(command, "alice") == digest_of(command._replace(version=None), "alice")
    )
    text = DOCS.read_text()
    assert data.decode() in text and digest in text
    assert re.fullmatch(r"[0-9a-f]{24}", digest)
