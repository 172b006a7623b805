"""The dealer's vault: a secret leaves it only after the table's log shows its round ended."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path

import pytest

from president.events.v1 import events_pb2 as epb
from president.hosting.dealer import RoundKey
from president.hosting.streams import stream_id
from president.services.dealer.vault import RoundNotOver, SecretVault
from president.store import EventStore, NewEvent, StoredEvent

KEY = RoundKey("v1", 1, 1)
STREAM = stream_id("v1")


class CountingStore(EventStore):
    """The event store, counting the events the vault reads."""

    read = 0

    def read_stream(
        self, stream_id: str, from_version: int = 1, limit: int | None = None
    ) -> list[StoredEvent]:
        stored = super().read_stream(stream_id, from_version, limit)
        self.read += len(stored)
        return stored

    def read_stream_backwards(
        self,
        stream_id: str,
        types: Collection[str],
        before_version: int | None = None,
        limit: int = 100,
    ) -> list[StoredEvent]:
        stored = super().read_stream_backwards(stream_id, types, before_version, limit)
        self.read += len(stored)
        return stored


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[CountingStore, SecretVault]]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with CountingStore.from_url(url, migrate=True) as events:
        vault = SecretVault(url, events, window=2)
        yield events, vault  # type: ignore[misc]
        vault.close()


def append(events: EventStore, *messages: object) -> None:
    version = events.current_version(STREAM)
    new = [
        message if isinstance(message, NewEvent) else NewEvent.from_message(message)  # type: ignore[arg-type]
        for message in messages
    ]
    events.append(STREAM, version, new, f"c{version}")


def filler(count: int) -> list[NewEvent]:
    return [NewEvent("president.events.v1.Reacted", b"") for _ in range(count)]


def test_a_secret_leaves_only_after_its_round_ended(
    stores: tuple[CountingStore, SecretVault],
) -> None:
    events, vault = stores
    fingerprint = vault.commit(KEY, 4, False, None)
    append(events, *filler(500))  # a long history before the round
    append(events, epb.DealCommitted(game_no=1, round_no=1, fingerprint=fingerprint))
    append(events, *filler(120))  # a round longer than one read
    with pytest.raises(RoundNotOver):
        vault.reveal(KEY)
    append(events, epb.RoundEnded(), *filler(3))
    events.read = 0
    assert vault.reveal(KEY).fingerprint == fingerprint
    assert events.read <= 3, "the vault read more than the round's commitment and end"


def test_an_end_after_another_commitment_does_not_count(
    stores: tuple[CountingStore, SecretVault],
) -> None:
    events, vault = stores
    fingerprint = vault.commit(KEY, 4, False, None)
    append(events, epb.DealCommitted(fingerprint=fingerprint), *filler(60))
    append(events, epb.DealCommitted(fingerprint="0" * 64), epb.RoundEnded())
    with pytest.raises(RoundNotOver):
        vault.reveal(KEY)


def test_a_repeated_commit_keeps_the_first_secret(
    stores: tuple[CountingStore, SecretVault],
) -> None:
    _events, vault = stores
    fingerprint = vault.commit(KEY, 4, False, None)
    assert vault.commit(KEY, 4, False, None) == fingerprint  # a retry: same fingerprint
    dealt = vault.deal(KEY)
    assert vault.commit(KEY, 4, False, None) == fingerprint
    assert vault.deal(KEY) == dealt  # and the same cards
    assert vault.commit(RoundKey("v1", 1, 2), 4, False, None) != fingerprint  # a new round
