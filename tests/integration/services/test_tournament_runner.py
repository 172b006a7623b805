"""The round runner's parts on a real store, SQLite and PostgreSQL: its draw secrets and its
idempotent steps; and the rule that turns a finished game into places.

The whole runner (tables opened, results followed, a kill -9 mid-round) is
``tests/e2e/test_tournament_rounds_e2e.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from president import tournament_codec as codec
from president.hosting.projection import Table
from president.rules.game.state import Seat, new_table
from president.rules.options import options_for
from president.servicekit.table_client import TableClient
from president.services.tournament.app import Tournaments, stream_id
from president.services.tournament.draw_secrets import DrawSecrets
from president.services.tournament.runner import (
    RoundRunner,
    command_id,
    game_places,
    settlement,
    table_id_of,
)
from president.store import EventStore
from president.tournament.commands import SERVER, StartRound
from president.tournament.draw import fingerprint
from president.tournament.scoring import settled_places
from tests.support.postgres import PostgresServer
from tests.support.tournaments import settings

NOW = datetime(2026, 12, 4, 18, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        made = f"sqlite:///{tmp_path / 'events.db'}"
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        made = server.create_database("runner")
    EventStore.from_url(made, migrate=True).close()
    yield made


def test_a_rounds_secret_is_drawn_once_and_kept(url: str) -> None:
    first, second = DrawSecrets(url), DrawSecrets(url)  # two processes on one database
    try:
        assert first.get("t1", 1) is None
        drawn = first.commit("t1", 1)
        assert drawn.fingerprint == fingerprint(drawn.secret, "t1", 1)
        assert second.commit("t1", 1) == drawn  # a restarted runner gets the same one
        assert second.get("t1", 1) == drawn
        other = second.commit("t1", 2)
        assert other.secret != drawn.secret
        assert first.commit("t2", 1).secret not in (drawn.secret, other.secret)
    finally:
        first.close()
        second.close()


def test_a_runner_step_sent_twice_is_appended_once(url: str) -> None:
    store = EventStore.from_url(url)
    clock = [NOW]
    tournaments = Tournaments(store, lambda: clock[0])
    try:
        made = replace(
            settings(),
            opens_at=NOW - timedelta(minutes=1),
            closes_at=NOW + timedelta(hours=1),
            starts_at=NOW + timedelta(minutes=5),
        )
        tid = tournaments.create("host", made).tournament.tournament_id
        tournaments.enter(tid, "ann", False, 0)
        tournaments.enter(tid, "bob", False, 0)
        clock[0] = NOW + timedelta(minutes=6)
        start = StartRound(SERVER, 1, "ab" * 32)
        step = command_id(tid, "start-1")
        tournaments.run_server(tid, start, step)
        again = tournaments.run_server(tid, start, step)  # a restarted runner sends it again
        assert len(again.tournament.rounds) == 1
        types = [e.type for e in store.read_stream(stream_id(tid))]
        assert types.count(codec.TYPE_PREFIX + "RoundDrawCommitted") == 1
        assert tournaments.unfinished() == (tid,)
    finally:
        store.close()


def test_a_games_places_follow_its_totals_then_its_last_round() -> None:
    assert game_places((3, 7, 1), (1, 0, 2)) == (2, 1, 3)
    # Equal totals: the seat that finished the last round earlier is placed first.
    assert game_places((2, 2, 5, 0), (2, 3, 1, 0)) == (3, 2, 1, 4)


def test_a_tournament_table_has_a_fixed_id_per_round_and_table() -> None:
    ids = {table_id_of("t1", r, t) for r in (1, 2) for t in (0, 1)}
    assert len(ids) == 4
    assert table_id_of("t1", 1, 0) == table_id_of("t1", 1, 0)
    assert all(len(i) == 12 and int(i, 16) >= 0 for i in ids)


def test_a_stopped_table_is_settled_from_its_totals_with_who_left() -> None:
    game = replace(
        new_table(options_for("house"), 4),
        seats=(Seat("ann"), Seat(), Seat("cat"), Seat("bot", is_bot=True)),
        scores=(1, 4, 2, 0),
        standings=(1, 2, 0, 3),
        game_no=1,
    )
    standing, departed = settlement(Table("t", game, 9))
    assert standing == (1, 2, 0, 3)
    assert departed == frozenset({1})
    # The core takes it: the players still seated first, the one who left after them.
    assert settled_places(standing, departed) == (2, 4, 1, 3)


async def test_one_stuck_tournament_does_not_hold_up_the_others(url: str) -> None:
    """A round committed without a kept secret (written by hand) cannot be seated: the
    runner says so and starts the other tournament, due at its start time, all the same."""
    store = EventStore.from_url(url)
    clock = [NOW]
    tournaments = Tournaments(store, lambda: clock[0])
    secrets = DrawSecrets(url)
    tables = TableClient("127.0.0.1:9")  # never called: no table is opened here
    runner = RoundRunner(tournaments, secrets, tables, store, lambda: clock[0])
    try:
        made = replace(
            settings(),
            opens_at=NOW - timedelta(minutes=1),
            closes_at=NOW + timedelta(hours=1),
            starts_at=NOW + timedelta(minutes=5),
        )
        stuck = tournaments.create("host", made).tournament.tournament_id
        due = tournaments.create("host", made).tournament.tournament_id
        for tid in (stuck, due):
            tournaments.enter(tid, "ann", False, 0)
            tournaments.enter(tid, "bob", False, 0)
        clock[0] = NOW + timedelta(minutes=6)
        tournaments.run_server(stuck, StartRound(SERVER, 1, "ab" * 32), "by-hand")
        await runner.run_once()
        assert tournaments.get(stuck).tournament.rounds[0].seating is None
        started = tournaments.get(due).tournament
        kept = secrets.get(due, 1)
        assert kept is not None
        assert started.rounds[0].fingerprint == kept.fingerprint
        assert started.rounds[0].seating is not None  # seated, then waiting on its tables
        assert started.rounds[0].secret is None  # the secret stays kept until the reveal
    finally:
        await tables.close()
        secrets.close()
        store.close()
