"""The table directory (a tracked consumer of the log) through a PostgreSQL outage on a
server of the test's own: a refresh that fails moves no position and writes no row; once
the database is back, every event is folded once."""

from __future__ import annotations

import pytest

from president.hosting.dealer import LocalDealer
from president.hosting.host import TableHost
from president.rules.options import options_for
from president.services.table.directory import CONSUMER, TableDirectory
from president.store import EventStore, is_transient, migrate
from tests.support.private_postgres import PrivatePostgres

pytestmark = pytest.mark.postgres


def test_a_refresh_during_an_outage_moves_nothing(private_postgres: PrivatePostgres) -> None:
    url = private_postgres.create_database()
    migrate(url)
    with EventStore.from_url(url) as store:
        host = TableHost(store, LocalDealer())
        directory = TableDirectory(store)
        host.create("t0", options_for("house"), seat_count=3, visibility="public")
        assert directory.refresh() == 1
        position = store.tracked_position(CONSUMER)
        for n in (1, 2):
            host.create(f"t{n}", options_for("house"), seat_count=3, visibility="public")
        private_postgres.stop()
        with pytest.raises(Exception) as failed:
            directory.refresh()
        assert is_transient(failed.value)
        private_postgres.start()
        assert store.tracked_position(CONSUMER) == position, "the position moved"
        assert directory.refresh() == 2  # each event folded once, now
        assert directory.refresh() == 0
        fresh = TableDirectory(store)  # another replica reads the rows
        assert [s.table_id for s in fresh.summaries()] == ["t0", "t1", "t2"]
