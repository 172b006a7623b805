"""The contract's comments on the actor say what the log holds: every actor form of a
recorded table (people, bots, a player who left and the timer) is named in
``EventEnvelope.actor``'s comment, as its account id or its literal form."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from president.store import EventStore
from tests.support.recorded_games import decoded, record_with_people

EVENTS_PROTO = Path(__file__).resolve().parents[3] / "protos/president/events/v1/events.proto"
PEOPLE = {"alice", "bob"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as opened:
        yield opened


def actor_comment() -> str:
    """The comment above ``string actor = 7;`` in events.proto."""
    lines = EVENTS_PROTO.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == "string actor = 7;")
    comment = []
    for line in reversed(lines[:at]):
        if not line.strip().startswith("//"):
            break
        comment.insert(0, line.strip().removeprefix("//").strip())
    return " ".join(comment)


def test_every_actor_form_in_the_log_is_named_by_the_comment(store: EventStore) -> None:
    table_id = record_with_people(store)
    actors = {stored.metadata["actor"] for stored, _ in decoded(store, table_id)}
    people = {actor for actor in actors if actor in PEOPLE}
    literal = actors - people
    assert people and "server" in literal and any(a.startswith("bot:") for a in literal)
    comment = actor_comment()
    assert "account id" in comment
    missing = sorted(form for form in literal if f'"{form}"' not in comment)
    assert not missing, f"the log holds actors {missing} that the comment does not name: {comment}"
