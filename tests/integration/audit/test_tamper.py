"""An insider edits the stored log with SQL; the audit names the event that is wrong.

Two insiders: a careless one who changes rows and leaves the hashes (the hash
chain catches them), and a careful one who also recomputes every hash from the
change on (the committed deal and the rules catch them). Each case runs on a
SQLite file and on PostgreSQL.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from president import audit, codec
from president.events.v1 import events_pb2 as pb
from president.hosting import events as ev
from president.hosting.autoplay import bot_actor, next_bot_command
from president.hosting.blinding import BLIND, blinding_value
from president.hosting.streams import stream_id
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import names
from president.store import EventStore, StoredEvent, migrate
from tests.support.recorded_games import (
    Row,
    decoded,
    delete_version,
    forged_row,
    kept_receipts,
    rechain,
    record,
    rewrite,
    rewrite_message,
    rewrite_without,
    set_column,
    set_message,
)
from tests.support.recorded_games import (
    message_of as item_message,
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


@pytest.fixture
def table(store: EventStore) -> str:
    """A house game of two rounds (the second with an exchange), recorded and verified."""
    table_id = record(store, "house", seed=5, rounds=2)
    assert check(store, table_id).ok
    return table_id


def check(store: EventStore, table_id: str, **kwargs: Any) -> audit.TableReport:
    return audit.verify_table(store.read_stream(stream_id(table_id)), **kwargs)


def problem(store: EventStore, table_id: str, **kwargs: Any) -> audit.Discrepancy:
    report = check(store, table_id, **kwargs)
    assert report.problem is not None, "the audit missed the tampering"
    assert report.events_verified < report.events
    print(report.problem)  # what a person reads; shown with pytest -s
    return report.problem


def single_groups(store: EventStore, table_id: str, kind: type) -> list[tuple[StoredEvent, Any]]:
    """Events of ``kind`` that are a whole command on their own."""
    items = decoded(store, table_id)
    found = []
    for index, (event, item) in enumerate(items):
        if not isinstance(item, kind):
            continue
        before = items[index - 1][0].command_id if index else None
        after = items[index + 1][0].command_id if index + 1 < len(items) else None
        if event.command_id not in (before, after):
            found.append((event, item))
    return found


def round_state_before(store: EventStore, table_id: str, version: int) -> g.GameState:
    """The table as replayed up to (not including) ``version``."""
    events = store.read_stream(stream_id(table_id))[: version - 1]
    return list(audit.replay_events(events))[-1].game


# --------------------------------------------------------------------------- plays
def test_an_edited_card_breaks_the_hash_chain(store: EventStore, table: str) -> None:
    event, _ = single_groups(store, table, rnd.CardsPlayed)[3]

    def change(message: Any) -> None:
        message.cards[0] = "RJ" if message.cards[0] != "RJ" else "BJ"

    set_message(store.engine, stream_id(table), event, change)

    found = problem(store, table)
    assert (found.version, found.event_type) == (event.version, "CardsPlayed")
    assert "changed" in found.reason


def test_an_edited_card_with_recomputed_hashes_is_refused_by_the_rules(
    store: EventStore, table: str
) -> None:
    event, played = single_groups(store, table, rnd.CardsPlayed)[0]
    game = round_state_before(store, table, event.version)
    assert game.round is not None
    other = (played.seat + 1) % 4
    foreign = names(game.round.hands[other])[0]  # a card another seat holds

    def change(message: Any) -> None:
        del message.cards[:]
        message.cards.append(foreign)

    rewrite_message(store.engine, stream_id(table), event.version, change)
    found = problem(store, table)
    assert (found.version, found.event_type) == (event.version, "CardsPlayed")
    assert "the rules refuse this play" in found.reason
    assert "NOT_IN_HAND" in found.reason


def test_a_wrong_next_seat_is_named(store: EventStore, table: str) -> None:
    event, played = single_groups(store, table, rnd.CardsPlayed)[2]
    assert played.next_to_act >= 0

    def change(message: Any) -> None:
        message.next_to_act = (played.next_to_act + 1) % 4

    rewrite_message(store.engine, stream_id(table), event.version, change)
    found = problem(store, table)
    assert (found.version, found.event_type) == (event.version, "CardsPlayed")
    assert f"the next seat to act is {(played.next_to_act + 1) % 4} in the log" in found.reason
    assert f"the rules give {played.next_to_act}" in found.reason


def test_a_dropped_event_breaks_the_chain(store: EventStore, table: str) -> None:
    event, _ = single_groups(store, table, rnd.Passed)[1]
    delete_version(store.engine, stream_id(table), event.version)

    found = problem(store, table)
    assert found.version == event.version + 1
    assert "missing" in found.reason


def test_a_dropped_event_with_renumbered_hashes_is_named_where_it_was(
    store: EventStore, table: str
) -> None:
    event, passed = single_groups(store, table, rnd.Passed)[1]
    rewrite_without(store.engine, stream_id(table), event.version)

    found = problem(store, table)
    assert found.version == event.version  # the event that now sits where the pass was
    assert f"it is seat {passed.seat}'s turn" in found.reason


def test_swapped_events_break_the_chain(store: EventStore, table: str) -> None:
    first, second = consecutive_moves(store, table)
    stream = stream_id(table)
    set_column(store.engine, stream, first.version, version=-1)
    set_column(store.engine, stream, second.version, version=first.version)
    set_column(store.engine, stream, -1, version=second.version)

    found = problem(store, table)
    assert found.version == first.version
    assert "reordered" in found.reason


def test_swapped_events_with_recomputed_hashes_are_refused(store: EventStore, table: str) -> None:
    first, second = consecutive_moves(store, table)

    def edit(stored: list[Row]) -> list[Row]:
        a, b = first.version - 1, second.version - 1
        stored[a], stored[b] = stored[b], stored[a]
        return stored

    rewrite(store.engine, stream_id(table), edit)
    found = problem(store, table)
    assert found.version == first.version
    assert "the rules refuse" in found.reason
    assert "NOT_YOUR_TURN" in found.reason


def consecutive_moves(store: EventStore, table: str) -> tuple[StoredEvent, StoredEvent]:
    """Two single-command plays in a row, by different seats."""
    moves = single_groups(store, table, rnd.CardsPlayed)
    for (one, a), (two, b) in itertools.pairwise(moves):
        if two.version == one.version + 1 and a.seat != b.seat:
            return one, two
    raise AssertionError("no two plays in a row")


def test_a_forged_play_with_a_recomputed_chain_is_refused(store: EventStore, table: str) -> None:
    event, _ = single_groups(store, table, rnd.CardsPlayed)[4]
    game = round_state_before(store, table, event.version + 1)
    state = game.round
    assert state is not None and state.to_act >= 0
    intruder = next(s for s in state.players if s != state.to_act and state.hands[s])
    forged = pb.CardsPlayed(
        seat=intruder,
        cards=names(state.hands[intruder])[-1:],
        trick_version=state.trick_version + 1,
        next_to_act=(intruder + 1) % 4,
    )

    def edit(stored: list[Row]) -> list[Row]:
        # The careful insider names the seat's own bot account, so only the rules can object.
        actor = bot_actor(game, intruder)
        stored.insert(event.version, forged_row(forged, "forged-play", actor))
        return stored

    rewrite(store.engine, stream_id(table), edit)
    found = problem(store, table)
    assert (found.version, found.event_type) == (event.version + 1, "CardsPlayed")
    assert f"the rules refuse this play of {forged.cards[0]} by seat {intruder}" in found.reason
    assert f"it is seat {state.to_act}'s turn" in found.reason


# --------------------------------------------------------------------------- deals
def test_a_changed_secret_breaks_the_chain(store: EventStore, table: str) -> None:
    event, _ = decoded_of(store, table, ev.DealRevealed)[0]

    def change(message: Any) -> None:
        message.secret_hex = "ab" * 32

    set_message(store.engine, stream_id(table), event, change)

    found = problem(store, table)
    assert (found.version, found.event_type) == (event.version, "DealRevealed")
    assert "changed" in found.reason


def test_a_changed_secret_with_recomputed_hashes_misses_the_fingerprint(
    store: EventStore, table: str
) -> None:
    event, _ = decoded_of(store, table, ev.DealRevealed)[0]

    def change(message: Any) -> None:
        message.secret_hex = "ab" * 32

    rewrite_message(store.engine, stream_id(table), event.version, change)
    found = problem(store, table)
    assert (found.version, found.event_type) == (event.version, "DealRevealed")
    assert "does not match the fingerprint" in found.reason


def test_a_changed_dealt_hand_with_recomputed_hashes_is_not_the_committed_deal(
    store: EventStore, table: str
) -> None:
    event, _ = decoded_of(store, table, rnd.RoundStarted)[1]

    def change(message: Any) -> None:
        zero, one = message.hands[0].cards, message.hands[1].cards
        zero[0], one[0] = one[0], zero[0]  # swap a card between seats 0 and 1

    rewrite_message(store.engine, stream_id(table), event.version, change)
    found = problem(store, table)
    assert (found.version, found.event_type) == (event.version, "RoundStarted")
    assert "seat 0's dealt hand is not the committed deal" in found.reason


def test_a_wrong_automatic_give_is_named(store: EventStore, table: str) -> None:
    event, given = next(
        (stored, item)
        for stored, item in decoded(store, table)
        if isinstance(item, rnd.CardsGiven) and item.automatic
    )
    game = round_state_before(store, table, event.version - 1)
    dealt = [item for _, item in decoded_of(store, table, rnd.RoundStarted)][1]
    weakest = names(dealt.hands[given.giver])[: given.cards.bit_count()]

    def change(message: Any) -> None:
        del message.cards[:]
        message.cards.extend(weakest)

    assert game is not None
    rewrite_message(store.engine, stream_id(table), event.version, change)
    found = problem(store, table)
    assert (found.version, found.event_type) == (event.version, "CardsGiven")
    assert f"seat {given.giver} must give their strongest cards" in found.reason


def test_a_changed_deal_order_is_named(store: EventStore, table: str) -> None:
    event, committed = decoded_of(store, table, ev.DealCommitted)[1]

    def change(message: Any) -> None:
        message.deal_order[:] = list(reversed(message.deal_order))

    rewrite_message(store.engine, stream_id(table), event.version, change)
    found = problem(store, table)
    assert (found.version, found.event_type) == (event.version, "DealCommitted")
    assert "the rules deal this round in the order" in found.reason
    assert list(committed.deal_order) != list(reversed(committed.deal_order))


def test_a_round_never_revealed_before_the_next_deal_is_named(
    store: EventStore, table: str
) -> None:
    revealed, _ = decoded_of(store, table, ev.DealRevealed)[0]
    committed, _ = decoded_of(store, table, ev.DealCommitted)[1]
    rewrite_without(store.engine, stream_id(table), revealed.version)

    found = problem(store, table)
    assert (found.version, found.event_type) == (committed.version - 1, "DealCommitted")
    assert "never revealed" in found.reason


def test_a_deleted_final_reveal_after_the_game_ended_is_named(
    store: EventStore, table: str
) -> None:
    """Gap 1: without its reveal the last round's deal is never checked; once the game ended
    that is an error, named where the game ended."""
    revealed, _ = decoded_of(store, table, ev.DealRevealed)[-1]
    ended, _ = decoded_of(store, table, rnd.RoundEnded)[-1]
    rewrite_without(store.engine, stream_id(table), revealed.version)

    found = problem(store, table)
    assert (found.version, found.event_type) == (revealed.version, "GameEnded")
    assert f"round 2 of game 1 (ended at version {ended.version}" in found.reason
    assert "never revealed" in found.reason


def test_a_live_log_between_a_round_end_and_its_reveal_is_a_warning(
    store: EventStore, table: str
) -> None:
    """The log read just after the round ended, before the reveal: a warning, how long ago."""
    events = store.read_stream(stream_id(table))
    revealed, _ = decoded_of(store, table, ev.DealRevealed)[-1]
    ended, _ = decoded_of(store, table, rnd.RoundEnded)[-1]
    live = events[: revealed.version - 1]  # up to the round's end
    now = datetime.fromisoformat(ended.time) + timedelta(seconds=2.5)

    report = audit.verify_table(live, now=now)
    assert report.ok, report.problem
    assert [item.status for item in report.rounds] == [audit.VERIFIED, audit.IN_PROGRESS]
    (warning,) = report.warnings
    assert f"round 2 of game 1 ended at version {ended.version}" in warning
    assert "2.5 s ago" in warning and "not revealed yet" in warning

    # The game's end in the log too, read within the reveal's grace: still a warning ...
    without = [*live, *events[revealed.version :]]
    rechained = rechain(without)
    assert audit.verify_table(rechained, now=now).ok
    # ... and an error once the grace has passed.
    late = now + audit.REVEAL_GRACE
    assert not audit.verify_table(rechained, now=late).ok


# --------------------------------------------------------------------------- scores
def test_changed_points_and_totals_with_recomputed_hashes_are_named(
    store: EventStore, table: str
) -> None:
    event, ended = decoded_of(store, table, rnd.RoundEnded)[0]
    winner = ended.standings[0]

    def change(message: Any) -> None:
        message.points[winner] += 2
        message.totals[winner] += 2

    rewrite_message(store.engine, stream_id(table), event.version, change)
    found = problem(store, table)
    assert (found.version, found.event_type) == (event.version, "RoundEnded")
    assert "the points differ" in found.reason
    points = ended.points[winner]
    assert f"seat {winner} has {points + 2} in the log, {points} by the rules" in found.reason


# --------------------------------------------------------------------------- rewritten suffix
def test_a_consistent_rewrite_of_a_suffix_is_caught_by_kept_hashes(
    store: EventStore, table: str
) -> None:
    """The careful insider replays the rest of the game with other legal plays.

    The log alone cannot tell: the deal, every play and every score follow
    the rules. The hashes a player kept of the events they were sent can.
    """
    original = store.read_stream(stream_id(table))
    kept = {event.version: event.hash for event in original}
    start = alternative_play_point(original)
    rewrite(store.engine, stream_id(table), lambda stored: replayed_suffix(stored, original, start))

    rewritten = store.read_stream(stream_id(table))
    assert [e.payload for e in rewritten[: start - 1]] == [e.payload for e in original[: start - 1]]
    assert rewritten[start - 1].payload != original[start - 1].payload
    assert check(store, table).ok  # every rule holds in the rewritten log

    found = problem(store, table, anchors=kept)
    assert found.version == start
    assert "rewritten" in found.reason


def test_a_different_pass_with_recomputed_hashes_is_caught_by_a_seats_receipts(
    store: EventStore, table: str, tmp_path: Path
) -> None:
    """A seat played; the insider stores a pass there and the rules' own rest of the round,
    every hash recomputed. The log alone holds; the receipts a seat's client kept name the
    very event, and the receipt."""
    original = store.read_stream(stream_id(table))
    start = alternative_play_point(original, "pass")
    rewrite(
        store.engine,
        stream_id(table),
        lambda stored: replayed_suffix(stored, original, start, "pass"),
    )
    rewritten = store.read_stream(stream_id(table))
    assert rewritten[start - 1].type.endswith(".Passed")
    assert check(store, table).ok  # every rule holds in the rewritten log

    kept = kept_receipts(table, "Bot 2", original)
    receipts = audit.load_receipts(kept.export(tmp_path / "bot2.json"))
    found = problem(store, table, receipts=[receipts])
    assert (found.version, found.event_type) == (start, "Passed")
    assert f"Bot 2's receipt of version {start}" in found.reason
    assert "the log was rewritten at this event" in found.reason


def test_kept_hashes_catch_a_log_cut_short(store: EventStore, table: str) -> None:
    original = store.read_stream(stream_id(table))
    kept = {event.version: event.hash for event in original}
    last = original[-1].version
    delete_version(store.engine, stream_id(table), last)
    assert check(store, table).ok  # a shorter chain is still a chain

    found = problem(store, table, anchors=kept)
    assert found.version == last - 1
    assert "cut off the end" in found.reason


def alternative_play_point(events: list[StoredEvent], verb: str = "play") -> int:
    """The version of the first play of the last round where another play (``verb``
    ``pass``: a pass) was legal."""
    started = max(e.version for e in events if e.type.endswith(".RoundStarted"))
    replayed = list(audit.replay_events(events))
    for start, _ in audit.command_groups(events):
        version = events[start].version
        if version <= started or not events[start].type.endswith(".CardsPlayed"):
            continue
        state = replayed[start - 1].game.round
        assert state is not None
        legal = rnd.legal_actions(state, state.to_act)
        if verb == "play" and len(legal) > 2:
            return version
        if verb == "pass" and ("pass", 0) in legal:
            return version
    raise AssertionError(f"no play with an alternative {verb}")


def replayed_suffix(
    stored: list[Row], original: list[StoredEvent], start: int, verb: str = "play"
) -> list[Row]:
    """The log up to ``start``, then another legal play (``verb`` ``pass``: a pass instead)
    and the rules' own consequences."""
    game = list(audit.replay_events(original[: start - 1]))[-1].game
    state = game.round
    assert state is not None
    played = audit.decode(original[start - 1])
    assert isinstance(played, rnd.CardsPlayed)
    command: Any = next(
        rnd.PlayCards(state.to_act, cards) if verb == "play" else rnd.Pass(state.to_act)
        for legal, cards in rnd.legal_actions(state, state.to_act)
        if legal == verb and (verb == "pass" or cards != played.cards)
    )
    new_rows = stored[: start - 1]
    tag = f"rewrite-{original[0].stream_id}"  # command ids are the store's, not the stream's
    counter = 0
    clock = datetime.fromisoformat(original[start - 2].time)

    def add(command: Any) -> None:
        # The careful insider names the right actor and lets each timer expire.
        nonlocal game, counter, clock
        counter += 1
        clock += timedelta(seconds=60 if isinstance(command, rnd.Timeout) else 1)
        if isinstance(command, rnd.PlayCards | rnd.Pass | rnd.ReturnCards):
            actor = bot_actor(game, command.seat)
        elif isinstance(command, rnd.Timeout | g.DealRound):
            actor = "server"
        else:
            actor = "host"
        for seq, event in enumerate(g.decide(game, command)):
            row = forged_row(codec.encode(event), f"{tag}-{counter}", actor, clock.isoformat())
            new_rows.append({**row, "command_seq": seq})
            game = g.evolve(game, event)

    while True:
        add(command)
        if game.phase != g.GamePhase.ROUND:
            break
        move = next_bot_command(game)
        command = move[1] if move is not None else rnd.Timeout()
    # The rest of the log: the reveal as it was, the host's commands decided again.
    after = next(
        index
        for index in range(start - 1, len(original))
        if original[index].type.endswith(".RoundEnded")
    )
    for first, end in audit.command_groups(original):
        if first <= after:
            continue
        item = audit.decode(original[first])
        if isinstance(item, ev.DealRevealed):
            clock += timedelta(seconds=1)
            new_rows.append(
                {**stored[first], **forged_row(item_message(stored[first]), f"{tag}-reveal")}
            )
            new_rows[-1]["metadata"] = json.dumps(
                {
                    "actor": "server",
                    "command_id": f"{tag}-reveal",
                    "time": clock.isoformat(),
                    BLIND: blinding_value(),
                },
                sort_keys=True,
                separators=(",", ":"),
            )
            continue
        next_command = audit.command_for(item, game)
        assert next_command is not None
        add(next_command)
        assert end - first >= 1
    return new_rows


def decoded_of(store: EventStore, table: str, kind: type) -> list[tuple[StoredEvent, Any]]:
    return [(event, item) for event, item in decoded(store, table) if isinstance(item, kind)]
