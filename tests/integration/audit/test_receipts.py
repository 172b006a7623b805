"""Alternative histories the log alone cannot tell from the truth, caught with players' receipts.

The careful insider stores a legal history with every hash recomputed: the
same table with another secret and fingerprint for a round, with a round
erased, with other seats' identities, with another pass. Each is recorded
honestly (it follows every rule), so ``verify_table`` alone passes it. The
receipts a seat kept of the real game (a :class:`president.client.Receipts`,
exported and read back) name the first event where the stored log departs,
and which receipt shows it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from president import audit
from president.events.v1 import events_pb2 as epb
from president.hosting.blinding import seeded_blinding
from president.hosting.dealer import LocalDealer, RoundKey
from president.hosting.host import TableHost
from president.hosting.streams import stream_id
from president.play.offline import round_secret
from president.play.recorded import play_to_end, record_bot_game, seeded_host
from president.rules import game as g
from president.rules.options import options_for
from president.store import EventStore, StoredEvent, migrate
from tests.support.recorded_games import PRESET_PLAYERS, kept_receipts, rechain


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[EventStore, EventStore]]:
    """The real log, and the insider's store that holds the alternative."""
    opened = []
    for name in ("real", "forged"):
        url = f"sqlite:///{tmp_path / f'{name}.db'}"
        migrate(url)
        opened.append(EventStore.from_url(url))
    yield opened[0], opened[1]
    for store in opened:
        store.close()


def game(
    store: EventStore,
    *,
    seed: int = 5,
    rounds: int = 2,
    names: tuple[str, ...] = (),
    later_seed: int | None = None,
) -> list[StoredEvent]:
    """A house game of bots at table ``t``, recorded; its events.

    ``later_seed``: the secrets of the rounds after the first come from it.
    """
    host, clock = seeded_host(store, seed)
    if later_seed is not None:

        def secret_for(key: RoundKey) -> bytes:
            chosen = seed if key.round_no == 1 else later_seed
            return round_secret(chosen, key.game_no, key.round_no)

        # The insider keeps the real prefix, blinding values included.
        host = TableHost(
            store, LocalDealer(secret_for=secret_for), clock=clock, blinding=seeded_blinding(seed)
        )
    options = options_for("house")
    players = PRESET_PLAYERS["house"]
    if names:
        host.create("t", options, seat_count=players, host_player_id="host")
        for seat, name in enumerate(names):
            host.decide_and_append("t", g.SitDown(seat, name, True), f"t/sit-{seat}", "host")
        host.decide_and_append("t", g.StartGame(), "t/start", "host")
        play_to_end(host, "t", rounds=rounds, clock=clock)
    else:
        record_bot_game(host, options, players, rounds=rounds, table_id="t", clock=clock)
    return store.read_stream(stream_id("t"))


def receipts_of(
    events: list[StoredEvent], holder: str, path: Path, versions: range | None = None
) -> audit.ReceiptFile:
    """What a client kept of the changes it was sent, exported and read back."""
    kept = kept_receipts("t", holder, events, versions)
    assert not kept.conflicts
    return audit.load_receipts(kept.export(path / f"{holder}.json"))


def departs(
    real: list[StoredEvent], forged: list[StoredEvent], files: list[audit.ReceiptFile]
) -> audit.Discrepancy:
    assert audit.verify_table(forged).ok, "the alternative must be legal on its own"
    report = audit.verify_table(forged, receipts=files)
    assert report.problem is not None, "the receipts missed the alternative history"
    print(report.problem)
    return report.problem


def first_difference(real: list[StoredEvent], forged: list[StoredEvent]) -> int:
    return next(a.version for a, b in zip(real, forged, strict=False) if a.hash != b.hash)


def test_honest_receipts_prove_the_whole_log(
    stores: tuple[EventStore, EventStore], tmp_path: Path
) -> None:
    real = game(stores[0])
    files = [receipts_of(real, "alice", tmp_path), receipts_of(real, "spectator", tmp_path)]
    report = audit.verify_table(real, receipts=files)
    assert report.ok, report.problem
    proof = audit.proven(real, files)
    assert proof.proven_through == real[-1].version
    assert proof.matching == proof.receipts == 2 * len(real)


def test_another_secret_and_fingerprint_for_a_round(
    stores: tuple[EventStore, EventStore], tmp_path: Path
) -> None:
    real, forged = game(stores[0]), game(stores[1], later_seed=6)
    files = [receipts_of(real, "alice", tmp_path)]
    found = departs(real, forged, files)
    where = first_difference(real, forged)
    assert (found.version, found.event_type) == (where, "DealCommitted")
    assert f"alice's receipt of version {where}" in found.reason
    assert "rewritten at this event" in found.reason


def test_a_round_erased(stores: tuple[EventStore, EventStore], tmp_path: Path) -> None:
    real, forged = game(stores[0], rounds=3), game(stores[1], rounds=2)
    found = departs(real, forged, [receipts_of(real, "bob", tmp_path)])
    where = first_difference(real, forged)
    assert found.version == where
    assert "bob's receipt" in found.reason


def test_swapped_seat_identities(stores: tuple[EventStore, EventStore], tmp_path: Path) -> None:
    real = game(stores[0], names=("Ann", "Ben", "Cat", "Dan"))
    forged = game(stores[1], names=("Ben", "Ann", "Cat", "Dan"))
    found = departs(real, forged, [receipts_of(real, "Cat", tmp_path)])
    assert (found.version, found.event_type) == (2, "SeatTaken")


def test_a_log_cut_after_the_receipts(
    stores: tuple[EventStore, EventStore], tmp_path: Path
) -> None:
    """The log's last commands cut off: a receipt of a later version shows the cut."""
    real, forged = game(stores[0], rounds=2), game(stores[1], rounds=2)
    cut = max(start for start, _ in audit.command_groups(forged) if start <= len(forged) - 5)
    forged = forged[:cut]
    found = departs(real, forged, [receipts_of(real, "Dan", tmp_path)])
    assert "cut off the end" in found.reason and "Dan's receipt" in found.reason


def test_sparse_receipts_narrow_the_departure(
    stores: tuple[EventStore, EventStore], tmp_path: Path
) -> None:
    """A spectator who joined late and left early: the receipts prove what they cover."""
    real, forged = game(stores[0], rounds=3), game(stores[1], rounds=3, later_seed=9)
    where = first_difference(real, forged)
    assert forged[where - 1].type.endswith("DealCommitted")  # round 2's
    early = receipts_of(real, "early", tmp_path, range(1, where - 3))
    late = receipts_of(real, "late", tmp_path, range(where + 4, len(real) + 1))
    found = departs(real, forged, [early, late])
    assert found.version == where + 4
    assert "late's receipt" in found.reason
    assert f"after version {where - 4} (whose kept hash matches)" in found.reason
    proof = audit.proven(forged, [early, late])
    assert proof.proven_through == where - 4


def test_receipts_hold_nothing_a_seat_could_not_see(
    stores: tuple[EventStore, EventStore], tmp_path: Path
) -> None:
    real = game(stores[0])
    path = tmp_path / "alice.json"
    receipts_of(real, "alice", tmp_path)
    data = json.loads(path.read_text())
    assert set(data) == {"format", "table_id", "holder", "receipts"}
    for item in data["receipts"]:
        assert set(item) == {"version", "hash", "previous_hash", "type"}
    secrets = {
        audit.decode(e).secret_hex  # type: ignore[union-attr]
        for e in real
        if e.type.endswith("DealRevealed")
    }
    text = path.read_text()
    assert not any(secret in text for secret in secrets)


def test_a_bad_receipts_file_is_refused_in_a_sentence(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "president-receipts/1", "receipts": [{"version": 0}]}))
    with pytest.raises(audit.BadReceipts, match="receipt 0 needs a version"):
        audit.load_receipts(path)
    path.write_text("{")
    with pytest.raises(audit.BadReceipts, match="not JSON"):
        audit.load_receipts(path)


def test_another_last_deal_under_the_real_fingerprint_without_its_reveal(
    stores: tuple[EventStore, EventStore],
) -> None:
    """Gap 1 as the issue tried it: the last round dealt other hands, the real round's
    fingerprint kept, its reveal deleted, every hash recomputed. The log alone names the
    game's end: its last round was never revealed, so its deal was never checked."""
    real, forged = game(stores[0]), game(stores[1], later_seed=6)
    committed = [e for e in real if e.type.endswith("DealCommitted")][-1]
    fingerprint = epb.DealCommitted.FromString(committed.payload).fingerprint
    last_reveal = [e for e in forged if e.type.endswith("DealRevealed")][-1]
    edited = []
    for event in forged:
        if event is last_reveal:
            continue
        if event.version == committed.version:
            message = epb.DealCommitted.FromString(event.payload)
            assert message.fingerprint != fingerprint  # another deal
            message.fingerprint = fingerprint
            event = replace(event, payload=message.SerializeToString(deterministic=True))
        edited.append(event)
    report = audit.verify_table(rechain(edited))
    assert report.problem is not None
    print(report.problem)
    assert report.problem.event_type == "GameEnded"
    assert "round 2 of game 1" in report.problem.reason
    assert "never revealed" in report.problem.reason
