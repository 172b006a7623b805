"""The audit flags a log where a round's secret was stored after the next round started
(what a table did when its reveal failed and the host's Next round went through)."""

from __future__ import annotations

import itertools
from pathlib import Path

from president import audit
from president.hosting.streams import stream_id
from president.store import EventStore, NewEvent, StoredEvent
from tests.support.recorded_games import record


def short(event: StoredEvent) -> str:
    return event.type.rsplit(".", 1)[-1]


def stored_again(events: list[StoredEvent], path: Path) -> list[StoredEvent]:
    """The events appended in this order to a fresh store: a consistent log, chain and all."""
    with EventStore.from_url(f"sqlite:///{path}", migrate=True) as store:
        stream = events[0].stream_id
        version = 0
        for command_id, group in itertools.groupby(events, key=lambda e: e.command_id):
            batch = list(group)
            new = [
                NewEvent(e.type, e.payload, {"actor": str(e.metadata.get("actor", ""))})
                for e in batch
            ]
            store.append(stream, version, new, command_id)
            version += len(batch)
        return store.read_stream(stream)


def test_a_reveal_stored_after_the_next_round_started_is_a_discrepancy(tmp_path: Path) -> None:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'game.db'}", migrate=True) as store:
        table_id = record(store, "house", seed=5, rounds=2)
        events = store.read_stream(stream_id(table_id))
    assert audit.verify_table(stored_again(events, tmp_path / "same.db")).ok
    kinds = [short(e) for e in events]
    reveal = kinds.index("DealRevealed")
    started = kinds.index("NextRoundStarted")
    assert reveal < started
    late = [*events[:reveal], *events[reveal + 1 : started + 1], events[reveal]]
    late += events[started + 1 :]
    report = audit.verify_table(stored_again(late, tmp_path / "late.db"))
    assert report.problem is not None, "the audit passed a reveal after the next round started"
    assert report.problem.event_type.endswith("DealRevealed")
    assert "after the next round started" in report.problem.reason
