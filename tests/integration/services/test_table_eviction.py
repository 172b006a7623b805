"""Eviction on each store, without processes: two replicas of the table service's app on one
store sweep at chosen times (``TableApp.evict(rules, now)``).

A closed table leaves after the finished time, a table where nothing happened
after the abandoned time; the replica that marks them and the one that only
holds them both drop them from memory; both answer TABLE_GONE; the log stays
readable and verifies. The real servers' version: tests/e2e/test_eviction_e2e.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from president.audit import verify_table
from president.game.v1 import game_pb2 as gpb
from president.hosting.dealer import LocalDealer
from president.hosting.host import TableHost
from president.hosting.move_on import CLOSING
from president.rules import game as g
from president.servicekit.config.table import EvictionRules
from president.servicekit.errors import Code, ServiceError
from president.services.table.app import TableApp
from president.services.table.commands import translate
from president.services.table.directory import TableDirectory
from president.store import EventStore
from tests.integration.services.test_table_units import either_store
from tests.support.postgres import settle

__all__ = ["either_store"]

RULES = EvictionRules(finished_seconds=3_600, abandoned_seconds=86_400)


def _replica(store: EventStore) -> tuple[TableHost, TableApp]:
    host = TableHost(store, LocalDealer())
    return host, TableApp(store, host, TableDirectory(store))


def _gone(app: TableApp, table_id: str) -> None:
    with pytest.raises(ServiceError) as refused:
        app.view(table_id, None)
    assert (refused.value.status, refused.value.reason) == (Code.NOT_FOUND, "TABLE_GONE")


def test_finished_then_abandoned_tables_leave_both_replicas(either_store: EventStore) -> None:
    host_a, app_a = _replica(either_store)
    host_b, app_b = _replica(either_store)
    for table_id in ("done", "idle"):
        app_a.create(table_id, "classic", {}, 4, "public", "ann", f"create-{table_id}")
    host_a.decide_and_append("done", g.SitDown(0, "ann"), "sit", "ann")
    host_a.decide_and_append("done", g.Leave(0), "leave", "ann")
    host_a.move_on("done", CLOSING, 0, 0, "close")  # nobody was left: TableClosed
    assert host_a.load("done").closed
    for table_id in ("done", "idle"):
        app_b.view(table_id, None)  # replica B holds both too
    now = datetime.now(UTC)
    settle(either_store)  # PostgreSQL: the directory folds only what every transaction lets it see

    assert app_a.evict(RULES, now + timedelta(minutes=30)) == []  # nothing due yet
    assert {s.table_id for s in app_a.list_tables(False)} == {"done", "idle"}

    later = now + timedelta(hours=2)  # past the finished time, not the abandoned one
    assert app_a.evict(RULES, later) == ["done"]
    assert host_a.cached("done") is None and host_a.cached("idle") is not None
    assert app_b.evict(RULES, later) == ["done"]  # B did not mark it, but drops it too
    assert host_b.cached("done") is None
    assert {s.table_id for s in app_b.list_tables(False)} == {"idle"}
    for app in (app_a, app_b):
        _gone(app, "done")
        sit = translate(gpb.Command(sit_down=gpb.SitDown(seat=1, player_id="bob")))
        with pytest.raises(ServiceError) as refused:
            app.handle_command("done", sit, "late-sit", gpb.Actor(player_id="bob", seat=1), None)
        assert refused.value.reason == "TABLE_GONE"
    events = app_a.read_events("done", 0, 0)  # the log stays, for the audit
    assert verify_table(events).ok
    assert events == app_b.read_events("done", 0, 0)

    sit = translate(gpb.Command(sit_down=gpb.SitDown(seat=1, player_id="bob")))
    app_b.handle_command("idle", sit, "sit-idle", gpb.Actor(player_id="bob", seat=1), None)
    settle(either_store)
    assert app_a.evict(RULES, now + timedelta(days=2)) == ["idle"]  # abandoned now
    # B noted its own change of the table (listed before the rows show it): not any more.
    assert app_b.list_tables(False) == [] and app_a.list_tables(False) == []
    assert app_b.evict(RULES, now + timedelta(days=2)) == ["idle"]
    _gone(app_a, "idle")
    assert verify_table(app_b.read_events("idle", 0, 0)).ok
