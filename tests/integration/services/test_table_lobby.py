"""The lobby's reads of the table list cost what they list, on each store.

Its queries walk an index of the rows they list (EXPLAIN QUERY PLAN on SQLite,
EXPLAIN on PostgreSQL: no full scan of ``table_directory``), whatever
the rows around them; a page never looks at the tables this replica noted
that it cannot list, and forgets every noted table a refresh wrote; a page
whose stale row no longer matches reads on, so it holds its limit; and
pages walked while tables are created and the list refreshes show every
public table once, in order.
"""

from __future__ import annotations

import random
import threading
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import insert, text

from president.hosting.dealer import LocalDealer
from president.hosting.host import TableHost
from president.rules import game as g
from president.services.table import directory as directory_module
from president.services.table.app import TableApp
from president.services.table.directory import Query, TableDirectory, list_statement
from president.store import EventStore
from tests.integration.services.test_table_units import either_store
from tests.support.postgres import settle

__all__ = ["either_store"]

#: The lobby's queries: joinable, joinable by preset and free seats after a page, to watch.
LOBBY_QUERIES = {
    "ix_table_directory_open_page": [
        Query(open_only=True, listed_only=True, limit=51),
        Query(open_only=True, listed_only=True, preset="club", min_free_seats=2, limit=51,
              after="t-01000"),
    ],
    "ix_table_directory_listed_page": [
        Query(listed_only=True, limit=51),
        Query(listed_only=True, limit=201, after="t-02000"),
    ],
}  # fmt: skip


def _rows(count: int) -> list[dict[str, Any]]:
    """Rows of a busy directory: most tables unlisted, many public ones under way or
    evicted, a few joinable."""
    rows = []
    for number in range(count):
        kind = number % 20
        public = kind >= 10
        rows.append(
            {
                "table_id": f"t-{number:05d}",
                "version": 3,
                "preset": "club" if number % 3 else "house",
                "options": "{}",
                "seated": 1 if kind == 19 else 4,
                "seat_count": 4,
                "phase": "lobby" if kind == 19 else "round",
                "visibility": "public" if public else "private",
                "open": kind == 19,
                "listed": public,
                "evicted": 10 <= kind < 16,
            }
        )
    return rows


def _plan(store: EventStore, query: Query) -> str:
    engine = store.engine
    sql = str(list_statement(query).compile(engine, compile_kwargs={"literal_binds": True}))
    with engine.connect() as connection:
        if engine.dialect.name == "postgresql":
            return "\n".join(row[0] for row in connection.execute(text(f"EXPLAIN {sql}")))
        return "\n".join(row[3] for row in connection.execute(text(f"EXPLAIN QUERY PLAN {sql}")))


def test_the_lobby_queries_walk_an_index_of_the_rows_they_list(either_store: EventStore) -> None:
    with either_store.engine.begin() as connection:
        connection.execute(insert(directory_module.table_directory), _rows(4_000))
        connection.execute(text("ANALYZE"))
    for index, queries in LOBBY_QUERIES.items():
        for query in queries:
            plan = _plan(either_store, query)
            assert index in plan, (query, plan)
            assert "Seq Scan" not in plan and "SCAN table_directory" not in plan, (query, plan)
            # SQLite reads them in id order from the index; PostgreSQL may sort the
            # rows its bitmap scan of the index found (the few it lists).
            assert "TEMP B-TREE" not in plan, (query, plan)


def _app(store: EventStore) -> tuple[TableHost, TableApp, TableDirectory]:
    host = TableHost(store, LocalDealer())
    directory = TableDirectory(store)
    return host, TableApp(store, host, directory), directory


def test_a_page_never_makes_a_summary_of_a_noted_table_it_cannot_list(
    either_store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, app, directory = _app(either_store)
    for number in range(60):
        visibility = ("private", "practice")[number % 2]
        app.create(f"hidden-{number:03d}", "house", {}, 4, visibility, "", f"c-{number}")
    app.create("open-1", "house", {}, 4, "public", "", "c-open")
    made = []
    real = directory_module.Summary.of.__func__  # type: ignore[attr-defined]

    def counted(cls: type[directory_module.Summary], table: Any) -> directory_module.Summary:
        made.append(table.table_id)
        return real(cls, table)  # type: ignore[no-any-return]

    monkeypatch.setattr(directory_module.Summary, "of", classmethod(counted))
    directory.followed = True  # the rows are behind: only the noted tables show these
    lobby = directory.summaries(query=Query(open_only=True, listed_only=True, limit=51))
    assert [summary.table_id for summary in lobby] == ["open-1"]
    assert made == ["open-1"]  # none of the 60 tables the lobby does not list
    monkeypatch.undo()
    settle(either_store)
    directory.refresh()
    assert directory.noted_tables() == 0  # the rows hold them all now
    assert [s.table_id for s in app.list_tables(True, Query(open_only=True, limit=51))] == [
        "open-1"
    ]


def test_a_page_whose_stale_row_no_longer_matches_reads_on(either_store: EventStore) -> None:
    host, app, directory = _app(either_store)
    for table_id in ("a", "b", "c", "d"):
        app.create(table_id, "house", {}, 4, "public", "", f"create-{table_id}")
    settle(either_store)
    directory.refresh()
    directory.followed = True  # nothing folds the seats taken below: the rows stay stale
    for seat in range(4):  # "a" is full: noted here, its row still says open
        host.decide_and_append("a", g.SitDown(seat, f"p{seat}"), f"sit-{seat}", "server")
    table = host.cached("a")
    assert table is not None
    directory.note(table)
    page = directory.summaries(query=Query(open_only=True, limit=2))
    assert [summary.table_id for summary in page] == ["b", "c"]
    rest = directory.summaries(query=Query(open_only=True, limit=2, after="c"))
    assert [summary.table_id for summary in rest] == ["d"]


def test_pages_walk_every_public_table_once_while_tables_are_created(
    either_store: EventStore,
) -> None:
    _, app, directory = _app(either_store)
    before = [f"p-{number:03d}" for number in range(0, 240, 2)]
    for table_id in before:
        app.create(table_id, "house", {}, 4, "public", "", f"create-{table_id}")
    settle(either_store)
    directory.refresh()
    directory.followed = True
    stop = threading.Event()
    created: list[str] = []

    def create() -> None:  # public tables between those listed, and hidden ones
        for number in range(1, 240, 2):
            if stop.is_set():
                return
            table_id = f"p-{number:03d}"
            app.create(table_id, "house", {}, 4, "public", "", f"create-{table_id}")
            app.create(f"q-{number:03d}", "house", {}, 4, "private", "", f"hide-{number}")
            created.append(table_id)

    def refresh() -> None:  # the table service's background refresh
        while not stop.is_set():
            directory.refresh()

    workers = [threading.Thread(target=create), threading.Thread(target=refresh)]
    for worker in workers:
        worker.start()
    walks = []
    try:
        for _ in range(3):  # three walks while the others run
            walks.append(_walk(directory))
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=60)
    for walk in walks:
        assert walk == sorted(set(walk))  # in order, none twice
        assert set(before) <= set(walk)  # every table there before the walk began
        assert all(table_id.startswith("p-") for table_id in walk)
    assert _walk(directory) == sorted(before + created)  # and then every one of them


def _walk(directory: TableDirectory) -> list[str]:
    """Every page of the joinable lobby, seven tables a page: their ids in order."""
    walk: list[str] = []
    after = ""
    while True:
        page = directory.summaries(query=Query(open_only=True, limit=7, after=after))
        walk.extend(summary.table_id for summary in page)
        if len(page) < 7:
            return walk
        after = page[-1].table_id


def test_pages_agree_with_the_tables_whatever_the_rows_lag(either_store: EventStore) -> None:
    """Random changes, a refresh now and then: every walk of every filter lists exactly
    the tables it should, as the tables are, whatever the rows still say."""
    host, app, directory = _app(either_store)
    directory.followed = True
    chance = random.Random(15)
    tables = [f"r-{number:02d}" for number in range(24)]
    for table_id in tables:
        preset = chance.choice(("house", "club"))
        visibility = chance.choice(("public", "public", "private"))
        app.create(table_id, preset, {}, 5 if preset == "club" else 4, visibility, "", table_id)
    seated = dict.fromkeys(tables, 0)
    for step in range(120):
        table_id = chance.choice(tables)
        seats = len(host.load(table_id).game.seats)
        if seated[table_id] < seats:
            sit = g.SitDown(seated[table_id], f"{table_id}-{seated[table_id]}")
            host.decide_and_append(table_id, sit, f"{table_id}-sit-{step}", "server")
            seated[table_id] += 1
            table = host.cached(table_id)
            assert table is not None
            directory.note(table)
        if chance.random() < 0.15:
            directory.refresh()
        if step % 10:
            continue
        truth = [directory_module.Summary.of(host.load(table_id)) for table_id in tables]
        for query in (
            Query(open_only=True, listed_only=True),
            Query(open_only=True, listed_only=True, min_free_seats=2),
            Query(open_only=True, listed_only=True, preset="club"),
            Query(listed_only=True),
        ):
            expected = [s.table_id for s in truth if s.matches(query)]
            for limit in (1, 2, 3, 5):
                walk: list[str] = []
                after = ""
                while True:
                    page = directory.summaries(query=replace(query, limit=limit, after=after))
                    walk.extend(summary.table_id for summary in page)
                    if len(page) < limit:
                        break
                    after = page[-1].table_id
                assert walk == expected, (step, query, limit)


def test_a_refresh_between_the_rows_and_the_noted_tables_loses_no_table(
    either_store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background refresh writes a table's row and forgets it as noted while a page
    reads: the page has it from one or the other."""
    _, app, directory = _app(either_store)
    directory.followed = True
    app.create("late", "house", {}, 4, "public", "", "create-late")
    settle(either_store)
    rows = directory._rows

    def rows_then_refresh(query: Query) -> list[Any]:
        read = rows(query)  # before the refresh: no row of "late" yet
        directory.refresh()
        return read

    monkeypatch.setattr(directory, "_rows", rows_then_refresh)
    page = directory.summaries(query=Query(open_only=True, limit=51))
    assert [summary.table_id for summary in page] == ["late"]
    assert directory.noted_tables() == 0
