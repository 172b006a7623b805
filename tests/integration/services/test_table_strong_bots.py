"""A table with a strong bot keeps its commands off the table service's event loop: the bots'
search after a play would hold every other table up."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from president.game.v1 import game_pb2 as gpb
from president.hosting.host import TableHost
from president.rules import game as g
from president.rules.levels import bot_player_id
from president.rules.options import options_for
from president.services.table.app import TableApp
from president.services.table.commands import translate
from president.services.table.directory import TableDirectory
from president.services.table.executor import CommandExecutor
from president.store import EventStore
from tests.support.table_host import WatchedDealer, fixed_secret


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as opened:
        yield opened


def _started(app: TableApp, host: TableHost, table_id: str, level: str) -> None:
    host.create(table_id, options_for("club", {"game_end": "rounds:5"}), seat_count=4)
    host.decide_and_append(table_id, g.SitDown(0, "p0"), f"{table_id}-sit-0", "server")
    for seat in (1, 2, 3):
        bot = g.SitDown(seat, bot_player_id(level, str(seat)), True)
        host.decide_and_append(table_id, bot, f"{table_id}-sit-{seat}", "server")
    start = translate(gpb.Command(start_game=gpb.StartGame()))
    app.handle_command(table_id, start, f"{table_id}-start", gpb.Actor(player_id="p0"), None)


def test_only_tables_without_a_strong_bot_may_run_on_the_loop(store: EventStore) -> None:
    host = TableHost(store, WatchedDealer(secret_for=fixed_secret))
    app = TableApp(store, host, TableDirectory(store))
    _started(app, host, "basic", "basic")
    _started(app, host, "strong", "strong")
    executor = CommandExecutor(app)
    assert app.settled_in_memory("basic") and app.settled_in_memory("strong")
    assert executor.table_ready_on_loop("basic")
    assert not executor.table_ready_on_loop("strong")
    assert app.has_searching_bot("strong") and not app.has_searching_bot("basic")
