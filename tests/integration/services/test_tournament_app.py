"""The tournament service's use cases on a real event store, SQLite and PostgreSQL.

Two services on one store (two replicas, or the service and its round
runner) write the same tournament: each command is decided on what the
other wrote, never on a stale copy, so entries are never lost nor past the
capacity. The clock is the service's input: the entry window follows it.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from president import tournament_codec as codec
from president.services.tournament.app import Tournaments, stream_id
from president.store import EventStore
from president.tournament.commands import TournamentSettings
from president.tournament.errors import Refusal, TournamentRefused
from president.tournament.state import fold
from tests.support.postgres import PostgresServer
from tests.support.tournaments import settings

NOW = datetime(2026, 12, 4, 18, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'events.db'}"
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        url = server.create_database("tournaments")
    opened = EventStore.from_url(url, migrate=True)
    yield opened
    opened.close()


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def open_now() -> TournamentSettings:
    return replace(
        settings(),
        opens_at=NOW - timedelta(minutes=1),
        closes_at=NOW + timedelta(hours=1),
        starts_at=NOW + timedelta(hours=1),
        capacity=12,
    )


def test_two_services_on_one_store_lose_no_entry_and_keep_the_capacity(
    store: EventStore,
) -> None:
    clock = Clock(NOW)
    one, two = Tournaments(store, clock), Tournaments(store, clock)
    tid = one.create("host", open_now()).tournament.tournament_id
    two.get(tid)  # the second holds a copy that the first's entries make stale

    def enter(n: int) -> str:
        service = (one, two)[n % 2]
        try:
            service.enter(tid, f"p{n}", False, 0)
        except TournamentRefused as refused:
            return refused.reason.value
        return "entered"

    with ThreadPoolExecutor(4) as pool:
        outcomes = list(pool.map(enter, range(16)))
    assert outcomes.count("entered") == 12
    assert set(outcomes) - {"entered"} == {Refusal.TOURNAMENT_FULL.value}
    stored = store.read_stream(stream_id(tid))
    state = fold(codec.decode(event.type, event.payload) for event in stored)
    assert state is not None and len(state.entrants) == 12
    assert one.get(tid).tournament == two.get(tid).tournament == state
    assert [event.version for event in stored] == list(range(1, 14))


def test_the_window_follows_the_services_clock_and_a_refusal_appends_nothing(
    store: EventStore,
) -> None:
    clock = Clock(NOW)
    service = Tournaments(store, clock)
    tid = service.create("host", open_now()).tournament.tournament_id
    clock.now = NOW + timedelta(hours=1)  # the window closes at the start
    with pytest.raises(TournamentRefused) as refused:
        service.enter(tid, "late", False, 0)
    assert refused.value.reason == Refusal.ENTRY_CLOSED
    assert store.current_version(stream_id(tid)) == 1
    stamped = store.read_stream(stream_id(tid))[0].time
    assert datetime.fromisoformat(stamped) == NOW  # events carry the clock's time
