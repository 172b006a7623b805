"""A round whose secret the operator lost (``DealSecretLost``) is reported as not
verifiable, a finding against the operator, never a pass; the rest of the log is still
checked."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from president import audit, codec
from president.hosting.events import DealCommitted, DealSecretLost
from president.hosting.streams import stream_id
from president.store import EventStore
from tests.integration.audit.test_reveal_order import short, stored_again
from tests.support.recorded_games import record


def test_a_lost_secret_is_a_finding_and_the_walk_goes_on(tmp_path: Path) -> None:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'game.db'}", migrate=True) as store:
        table_id = record(store, "house", seed=5, rounds=2)
        events = store.read_stream(stream_id(table_id))
    kinds = [short(e) for e in events]
    first_deal = events[kinds.index("DealCommitted")]
    committed = codec.decode(first_deal.type, first_deal.payload)
    assert isinstance(committed, DealCommitted)
    reveal = kinds.index("DealRevealed")
    message = codec.encode(DealSecretLost(1, 1, committed.fingerprint))
    lost = replace(  # what the table stores when the dealer answers SECRET_LOST
        events[reveal],
        type=codec.type_name(message),
        payload=message.SerializeToString(deterministic=True),
    )
    log = stored_again([*events[:reveal], lost, *events[reveal + 1 :]], tmp_path / "lost.db")
    report = audit.verify_table(log)
    assert not report.ok, "the audit passed a round whose secret was lost"
    assert report.problem is not None and report.problem.event_type == "DealSecretLost"
    assert "the operator lost the secret of round 1 of game 1" in report.problem.reason
    statuses = [item.status for item in report.rounds]
    assert statuses[0] == audit.SECRET_LOST
    assert statuses[1:] and set(statuses[1:]) == {audit.VERIFIED}, "the walk stopped"
