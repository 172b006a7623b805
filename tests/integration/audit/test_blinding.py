"""Blinding values: the chain hash a seat receives does not give away the cards hidden from it.

A seat receives every event's hash (its receipt) with the event's actor,
command id and time, and the payload as it may see it. An exchange return
between two other seats is one or two cards: without a blinding value, the
seat could hash every candidate (under 1,400 of them) and keep the one whose
hash is the receipt. These tests run that brute force, as the seat can, on
a game recorded through the table service's code with its secure blinding
values: it finds the cards of every hidden return in the format before
blinding values, and none in the stored log. The audit admits the blinding
value, checks it, and still verifies logs written before it (with a warning).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from president import audit
from president.events.v1 import events_pb2 as pb
from president.hosting.blinding import BLIND
from president.hosting.commands import digest_of
from president.hosting.host import TableHost
from president.hosting.retries import DIGEST
from president.hosting.streams import stream_id
from president.play.recorded import GameClock, record_bot_game, seeded_dealer
from president.rules import round as rnd
from president.rules.cards import STANDARD_DECK_SIZE, mask_of, names
from president.rules.options import options_for
from president.servicekit.nats import envelope
from president.services.gateway.streams.entries import Entry, apply
from president.store import EventStore, StoredEvent, event_hash, migrate, verify_chain
from tests.support.recorded_games import rechain

SEATS = 4
CARDS_GIVEN = "president.events.v1.CardsGiven"


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[StoredEvent]]:
    """Two rounds of classic (the second has its exchange), recorded as the table service
    records them: its host code with the secure blinding values."""
    url = f"sqlite:///{Path(tmp_path_factory.mktemp('blinding')) / 'store.db'}"
    migrate(url)
    store = EventStore.from_url(url)
    clock = GameClock()
    host = TableHost(store, seeded_dealer(11), clock=clock)
    table_id = record_bot_game(host, options_for("classic"), SEATS, rounds=2, clock=clock)
    yield store.read_stream(stream_id(table_id))
    store.close()


def seen_by(events: list[StoredEvent], seat: int) -> list[pb.EventEnvelope]:
    """Every event as the gateway sends it to ``seat``: its entry's redacted envelope."""
    table = None
    shown = []
    for stored in events:
        entry: Entry = apply(table, envelope(stored))
        shown.append(entry.event(seat))
        table = entry.table
    return shown


def candidates() -> Iterator[int]:
    """Every return the seat cannot rule out: one or two of the 52 cards."""
    for size in (1, 2):
        for cards in combinations(range(STANDARD_DECK_SIZE), size):
            yield sum(1 << card for card in cards)


def brute_force(seen: pb.EventEnvelope) -> int | None:
    """The cards of a hidden exchange whose hash is the receipt, from what the seat received:
    the redacted payload with each candidate put back, the metadata the envelope carries,
    with no digest (a bot's or the server's command) or the digest of a return of the
    candidate (a person's command), as the table service makes it."""
    shown = pb.CardsGiven.FromString(seen.payload)
    known = {"actor": seen.actor, "command_id": seen.command_id, "time": seen.time}
    for cards in candidates():
        guess = pb.CardsGiven()
        guess.CopyFrom(shown)
        guess.cards.extend(names(cards))
        payload = guess.SerializeToString(deterministic=True)
        digest = digest_of(rnd.ReturnCards(shown.giver, cards), seen.actor)
        for metadata in (known, {**known, DIGEST: digest}):
            tried = event_hash(
                seen.stream_id, seen.version, seen.type, payload, metadata, seen.previous_hash
            )
            if tried == seen.hash:
                return cards
    return None


def hidden_exchanges(events: list[StoredEvent]) -> list[tuple[int, StoredEvent, pb.EventEnvelope]]:
    """Every exchange of cards (the automatic gifts and the free returns), with each seat
    that sees it without its cards."""
    found = []
    for seat in range(SEATS):
        for stored, seen in zip(events, seen_by(events, seat), strict=True):
            if stored.type != CARDS_GIVEN:
                continue
            given = pb.CardsGiven.FromString(stored.payload)
            if seat in (given.giver, given.receiver):
                continue
            assert not pb.CardsGiven.FromString(seen.payload).cards  # the seat sees no card
            found.append((seat, stored, seen))
    return found


def unblinded(event: StoredEvent, seen: pb.EventEnvelope) -> pb.EventEnvelope:
    """``seen`` as it would be were ``event`` stored without its blinding value (the format
    before blinding values): only the hash differs."""
    metadata = {key: value for key, value in event.metadata.items() if key != BLIND}
    digest = event_hash(
        event.stream_id, event.version, event.type, event.payload, metadata, event.previous_hash
    )
    without = pb.EventEnvelope()
    without.CopyFrom(seen)
    without.hash = digest
    return without


def test_a_seat_cannot_recover_a_hidden_exchange_from_its_receipt(
    events: list[StoredEvent],
) -> None:
    assert verify_chain(events) is None and audit.verify_table(events).ok
    exchanges = hidden_exchanges(events)
    # Two gifts and two returns in the exchange, each hidden from two seats.
    assert len(exchanges) == 4 * 2
    for seat, stored, seen in exchanges:
        hidden = mask_of(pb.CardsGiven.FromString(stored.payload).cards)
        # Before blinding values, the seat's brute force finds the cards it must not see...
        assert brute_force(unblinded(stored, seen)) == hidden, f"seat {seat}"
        # ...and with them, no candidate matches the receipt it received.
        assert seen.hash == stored.hash
        assert brute_force(seen) is None, f"seat {seat}"


def test_every_event_has_a_blinding_value_of_its_own_that_no_seat_receives(
    events: list[StoredEvent],
) -> None:
    values = [event.metadata[BLIND] for event in events]
    assert all(isinstance(value, str) and len(value) == 32 for value in values)
    assert len(set(values)) == len(values)
    for seat in (*range(SEATS), None):
        for value, seen in zip(
            values,
            seen_by(events, seat) if seat is not None else map(envelope, events),
            strict=True,
        ):
            wire = seen.SerializeToString()
            assert str(value).encode() not in wire and bytes.fromhex(str(value)) not in wire


def test_a_log_written_before_blinding_values_verifies_with_a_warning(
    events: list[StoredEvent],
) -> None:
    old = rechain(
        [
            replace(event, metadata={k: v for k, v in event.metadata.items() if k != BLIND})
            for event in events
        ]
    )
    report = audit.verify_table(old)
    assert report.ok, report.problem
    (warning,) = report.warnings
    assert f"versions 1-{len(old)} carry no blinding value" in warning
    assert "test guesses of the cards hidden from it" in warning
    # A log blinded from some event on (a table written across the upgrade) says which part.
    upgraded = rechain([*old[:10], *events[10:]])
    report = audit.verify_table(upgraded)
    assert report.ok, report.problem
    assert any("versions 1-10 carry no blinding value" in item for item in report.warnings)
    assert not audit.verify_table(events).warnings


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, "its metadata has no blinding value, yet an earlier event of the log has one"),
        ("seat 2 holds the 2 of spades", "its blinding value is not 32 hex digits"),
        ("ABCDEF" + "0" * 26, "its blinding value is not 32 hex digits"),
        (12345678901234567890123456789012, "its blinding value is not 32 hex digits"),
    ],
)
def test_a_missing_or_malformed_blinding_value_is_named(
    events: list[StoredEvent], value: object, reason: str
) -> None:
    """The careful insider's edit, every hash recomputed: the blinding value of one event
    dropped, or used to hide data."""
    target = 30
    metadata: dict[str, Any] = {k: v for k, v in events[target].metadata.items() if k != BLIND}
    if value is not None:
        metadata[BLIND] = value
    forged = rechain(
        [*events[:target], replace(events[target], metadata=metadata), *events[target + 1 :]]
    )
    report = audit.verify_table(forged)
    assert report.problem is not None, "the audit missed the edit"
    assert report.problem.version == target + 1
    assert reason in report.problem.reason
