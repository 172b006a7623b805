"""Which tables exist, for ``ListTables``: a read model in the event store's database.

One row per table (``table_directory``, migration 0004), kept by the tracked
consumer ``table-directory`` of the store's global order: each refresh folds
the events appended since the consumer's position (by any replica) and
writes the rows of the tables they changed together with the new position,
in one transaction. So a replica that starts, or a second replica, lists
from the rows and folds only what is new; nothing reads the whole log again,
and the list does not live in memory.

Each table is folded with the engine, so its phase and seats are exactly
what the table service itself sees. The folding happens before the write
transaction (on SQLite that one holds up the appends), from a bounded cache
of tables; a table missing from it, or left behind by another replica's
refresh, is folded again from its own stream. A replica also notes each
table it changes (:meth:`TableDirectory.note`), so its own changes are
listed at once, before the global order shows them (PostgreSQL holds an
event back while older transactions run), until a refresh writes their rows.

The table service refreshes in the background (:attr:`TableDirectory.followed`),
so a list reads its page of rows and the few noted tables in that page,
never waits on folding a burst of changes; other replicas' changes are
listed once the next refresh folds them.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    DateTime,
    Integer,
    MetaData,
    Select,
    String,
    Table,
    Text,
    and_,
    false,
    or_,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from president import codec
from president.hosting.projection import Table as TableState
from president.hosting.projection import fold_stored
from president.hosting.streams import STREAM_PREFIX, table_id_of
from president.hosting.visibility import PUBLIC
from president.store import EventStore, StoredEvent

CONSUMER = "table-directory"
#: Events folded per refresh transaction.
BATCH = 500
#: Tables kept folded in memory between refreshes (the busy ones).
CACHED_TABLES = 2_000
#: Tables this replica changed, listed from memory until the rows catch up.
NOTED_TABLES = 10_000
#: Summaries made from rows, kept by table and version (a page of the busy lobby then
#: reads its rows without parsing each one's options again).
KEPT_SUMMARIES = 4_096

metadata = MetaData()
table_directory = Table(
    "table_directory",
    metadata,
    Column("table_id", String(200), primary_key=True),
    Column("version", Integer, nullable=False),
    Column("preset", String(64), nullable=False),
    Column("options", Text, nullable=False),
    Column("seated", Integer, nullable=False),
    Column("seat_count", Integer, nullable=False),
    Column("phase", String(32), nullable=False),
    Column("visibility", String(32), nullable=False),
    Column("open", Boolean, nullable=False),
    Column("name", String(200), nullable=False, server_default=""),
    Column("host_name", String(200), nullable=False, server_default=""),
    Column("listed", Boolean, nullable=False, server_default=false()),
    # When the table last changed (its last event's time), and whether it left the list
    # for good (migration 0009_eviction; :meth:`TableDirectory.evict`).
    Column("changed_at", DateTime(timezone=True), nullable=True),
    Column("evicted", Boolean, nullable=False, server_default=false()),
)


#: The phase a closed table is listed with.
CLOSED = "closed"


@dataclass(frozen=True)
class Summary:
    """A table in a list."""

    table_id: str
    preset: str
    options: dict[str, str]
    seated: int
    seat_count: int
    phase: str
    visibility: str
    name: str = ""
    host_name: str = ""
    #: The table's version it shows (a table at one version always shows the same).
    version: int = 0

    @property
    def listed(self) -> bool:
        """A table the lobby lists: every public one (joinable or to spectate)."""
        return self.visibility == "public"

    @property
    def free_seats(self) -> int:
        return self.seat_count - self.seated

    def matches(self, query: Query) -> bool:
        """Whether the summary is one ``query`` asks for (its page bounds aside)."""
        return (
            (not query.open_only or self.open)
            and (not query.listed_only or self.listed)
            and (not query.preset or self.preset == query.preset)
            and self.free_seats >= query.min_free_seats
        )

    @property
    def open(self) -> bool:
        """A public table in the lobby with a free seat."""
        return (
            self.visibility == "public" and self.phase == "lobby" and self.seated < self.seat_count
        )

    @classmethod
    def of(cls, table: TableState) -> Summary:
        game = table.game
        return cls(
            table_id=table.table_id,
            preset=game.options.preset,
            options=codec.options_to_map(game.options),
            seated=len(game.occupied),
            seat_count=len(game.seats),
            # A closed table is never open, whatever phase it closed in.
            phase=CLOSED if table.closed else str(game.phase),
            visibility=table.visibility,
            name=table.name,
            host_name=_host_name(table),
            version=table.version,
        )


def _host_name(table: TableState) -> str:
    """The display name of the seat the host holds ("" while the host holds none)."""
    host = table.host_player_id
    return next((s.display_name for s in table.game.seats if host and s.player == host), "")


@dataclass(frozen=True)
class Query:
    """Which tables a list asks for: filters, then at most ``limit`` by id after ``after``."""

    open_only: bool = False
    listed_only: bool = False
    preset: str = ""
    min_free_seats: int = 0
    limit: int = 0
    after: str = ""


class TableDirectory:
    """The table list: rows in the store's database, brought up to date on refresh."""

    def __init__(self, store: EventStore, *, cached_tables: int = CACHED_TABLES) -> None:
        self._store = store
        self._cache: OrderedDict[str, TableState] = OrderedDict()
        self._cached_tables = cached_tables
        self._noted: dict[str, TableState] = {}
        self._summaries: dict[tuple[str, int], Summary] = {}
        self._noting = threading.Lock()  # taken after every command: never held long
        self._guard = threading.Lock()  # one refresh at a time
        #: Whether something refreshes the directory in the background (the table
        #: service does): then a list never folds, it reads the rows as they are.
        self.followed = False

    def refresh(self) -> int:
        """Fold the events appended since the consumer's position; returns how many."""
        with self._guard:
            folded = 0
            while True:
                after = self._store.tracked_position(CONSUMER)
                batch = self._store.read_all(after, BATCH)
                if not batch:
                    return folded
                changed_at = _last_times(batch)
                rows = [
                    self._row(table, changed_at.get(table.table_id))
                    for table in self._fold(batch).values()
                ]
                write = functools.partial(_upsert, rows=rows)
                if not self._store.commit_from(CONSUMER, after, batch[-1].position, write):
                    continue  # another replica moved the position: read from there
                folded += len(batch)
                self._caught_up(rows)
                if len(batch) < BATCH:
                    return folded

    def _caught_up(self, rows: list[dict[str, Any]]) -> None:
        """Forget the noted tables whose rows now hold their noted version or a later one."""
        with self._noting:
            for row in rows:
                known = self._noted.get(row["table_id"])
                if known is not None and known.version <= row["version"]:
                    del self._noted[row["table_id"]]

    def noted_tables(self) -> int:
        """How many tables this replica changed that are listed from memory (their rows
        not yet written)."""
        with self._noting:
            return len(self._noted)

    def note(self, table: TableState) -> None:
        """A table as this replica just left it: listed at once, before the rows show it."""
        with self._noting:
            known = self._noted.get(table.table_id)
            if known is None or known.version < table.version:
                if len(self._noted) >= NOTED_TABLES:
                    self._noted.clear()
                self._noted[table.table_id] = table

    def summaries(self, open_only: bool = False, query: Query | None = None) -> list[Summary]:
        """Every table (or only open ones, or those ``query`` asks for), by id.

        The filters and the page are the query's, on indexed columns: the cost
        follows the tables listed, not the tables there are.
        """
        query = query or Query(open_only=open_only)
        found: list[Summary] = []
        after = query.after
        while True:
            listed, last = self._page(replace(query, after=after))
            found.extend(listed)
            if last is None or len(found) >= query.limit:
                return found[: query.limit] if query.limit else found
            # A noted table left this page (it no longer matches): the page is short of
            # ``limit`` while there are more rows: the next ones, after the last row read.
            after = last

    def _page(self, query: Query) -> tuple[list[Summary], str | None]:
        """The tables ``query`` asks for among its rows and the noted tables of their id
        range, by id; and the last row's id when the rows filled the limit (the range
        ends there: the next rows may hold more), else None."""
        # The noted tables before the rows: a refresh that writes a table's row and
        # forgets it in between leaves it in one or the other, never in neither.
        with self._noting:
            noted_before = list(self._noted.values())
        rows = self._rows(query)
        listed = {row.table_id: (int(row.version), self._summary(row)) for row in rows}
        last = rows[-1].table_id if query.limit and len(rows) >= query.limit else None
        noted = [  # only the noted tables of this page that may change it
            table
            for table in noted_before
            if table.table_id > query.after
            and (last is None or table.table_id <= last)
            and (table.table_id in listed or _may_match(table, query))
        ]
        gone = self.evicted_among([table.table_id for table in noted])
        for table in noted:
            if table.table_id in gone:
                listed.pop(table.table_id, None)
                continue
            version, _ = listed.get(table.table_id, (0, None))
            if table.version <= version:
                with self._noting:  # the rows caught up: no need to remember it
                    if self._noted.get(table.table_id) is table:
                        del self._noted[table.table_id]
                continue
            summary = Summary.of(table)
            if summary.matches(query):
                listed[table.table_id] = (table.version, summary)
            else:
                listed.pop(table.table_id, None)
        return [listed[table_id][1] for table_id in sorted(listed)], last

    def _summary(self, row: Any) -> Summary:
        """The row's summary: kept from an earlier read of the same version, else made."""
        key = (row.table_id, int(row.version))
        summary = self._summaries.get(key)
        if summary is None:
            if len(self._summaries) >= KEPT_SUMMARIES:
                self._summaries.clear()  # the busy tables come back at once
            summary = self._summaries[key] = _summary(row)
        return summary

    def _rows(self, query: Query) -> list[Any]:
        with self._store.engine.connect() as connection:
            return list(connection.execute(list_statement(query)).all())

    # -- eviction --------------------------------------------------------------
    def evict(self, finished_before: datetime, abandoned_before: datetime) -> list[str]:
        """Mark evicted the tables closed before ``finished_before`` and those that did not
        change since ``abandoned_before``; the ids newly evicted. They leave the list for
        good (their log stays in the store)."""
        columns = table_directory.c
        due = and_(
            columns.evicted.is_(False),
            or_(
                and_(columns.phase == CLOSED, columns.changed_at < finished_before),
                columns.changed_at < abandoned_before,
            ),
        )
        with self._store.engine.begin() as connection:
            ids = [row.table_id for row in connection.execute(select(columns.table_id).where(due))]
            if ids:
                connection.execute(
                    update(table_directory)
                    .where(columns.table_id.in_(ids), columns.evicted.is_(False))
                    .values(evicted=True)
                )
        with self._noting:
            for table_id in ids:
                self._noted.pop(table_id, None)
        for table_id in ids:
            self._cache.pop(table_id, None)
        return ids

    def evicted_among(self, table_ids: list[str]) -> set[str]:
        """Which of these tables left the list for good (:meth:`evict`)."""
        if not table_ids:
            return set()
        columns = table_directory.c
        statement = select(columns.table_id).where(
            columns.evicted.is_(True), columns.table_id.in_(table_ids)
        )
        with self._store.engine.connect() as connection:
            return {row.table_id for row in connection.execute(statement)}

    # -- folding ---------------------------------------------------------------
    def _fold(self, batch: Sequence[StoredEvent]) -> dict[str, TableState]:
        """Each table the batch changed, folded to its last event in the batch.

        A table this replica left at that version or later (:meth:`note`) is taken as
        it was noted: its own appends are not folded again.
        """
        changed: dict[str, TableState] = {}
        with self._noting:
            noted = dict(self._noted)
        for stored in batch:
            if not stored.stream_id.startswith(STREAM_PREFIX):
                continue
            table_id = table_id_of(stored.stream_id)
            table = changed.get(table_id)
            try:
                if table is None:
                    table = self._noted_at(noted.get(table_id), stored)
                if table is None and stored.version > 1:
                    table = self._before(table_id, stored)
                if table is not None and table.version >= stored.version:
                    changed[table_id] = table  # already folded past it (another refresh)
                    continue
                folded = fold_stored(table, [stored])
            except ValueError:
                continue  # a stream that does not begin with TableCreated: not a table
            if folded is not None:
                changed[table_id] = folded
        for table_id, table in changed.items():
            self._cache[table_id] = table
            self._cache.move_to_end(table_id)
        while len(self._cache) > self._cached_tables:
            self._cache.popitem(last=False)
        return changed

    @staticmethod
    def _noted_at(noted: TableState | None, stored: StoredEvent) -> TableState | None:
        """The noted table, if it is at ``stored``'s version or later (else None)."""
        return noted if noted is not None and noted.version >= stored.version else None

    def _before(self, table_id: str, stored: StoredEvent) -> TableState | None:
        """The table just before ``stored`` (or later, if the cache is ahead): from the
        cache, brought up to it with the events it missed (another replica's refresh
        folded them), else folded from its own stream.

        Reading only what the cache missed keeps a replica's refresh at the events since
        its last look, not the table's whole stream each time replicas take turns."""
        cached = self._cache.get(table_id)
        if cached is not None and cached.version >= stored.version - 1:
            return cached
        start = cached.version + 1 if cached is not None else 1
        missed = self._store.read_stream(stored.stream_id, start, stored.version - start)
        return fold_stored(cached, missed)

    @staticmethod
    def _row(table: TableState, changed_at: datetime | None) -> dict[str, Any]:
        summary = Summary.of(table)
        return {
            "changed_at": changed_at,
            "table_id": summary.table_id,
            "version": table.version,
            "preset": summary.preset,
            "options": json.dumps(summary.options, sort_keys=True, separators=(",", ":")),
            "seated": summary.seated,
            "seat_count": summary.seat_count,
            "phase": summary.phase,
            "visibility": summary.visibility,
            "open": summary.open,
            "name": summary.name,
            "host_name": summary.host_name,
            "listed": summary.listed,
        }


def list_statement(query: Query) -> Select[Any]:
    """The rows ``query`` asks for, by table id: its filters and page on indexed columns."""
    columns = table_directory.c
    statement = select(table_directory).where(columns.evicted.is_(False))
    # Each on the index that leads with it and ``evicted`` (migration 0010), so a page
    # walks only the open (or listed) tables not evicted; a preset or free-seat filter
    # then skips those of them it does not list. An open table is listed (public), so
    # an open page asks ``open`` alone (SQLite took the listed index for both). Ordered
    # as the index is (the same order as by id alone: both are equal all along), or
    # PostgreSQL walks the primary key where it guesses the listed rows are many.
    lead = columns.open if query.open_only else columns.listed if query.listed_only else None
    if lead is not None:
        statement = statement.where(lead.is_(True)).order_by(lead, columns.evicted)
    statement = statement.order_by(columns.table_id)
    if query.preset:
        statement = statement.where(columns.preset == query.preset)
    if query.min_free_seats:
        statement = statement.where(columns.seat_count - columns.seated >= query.min_free_seats)
    if query.after:
        statement = statement.where(columns.table_id > query.after)
    if query.limit:
        statement = statement.limit(query.limit)
    return statement


def _may_match(table: TableState, query: Query) -> bool:
    """Whether ``query`` may list ``table`` (a cheap look before its summary is made)."""
    if (query.open_only or query.listed_only) and table.visibility != PUBLIC:
        return False
    return not query.preset or table.game.options.preset == query.preset


def _last_times(batch: Sequence[StoredEvent]) -> dict[str, datetime]:
    """Each table's last event time in ``batch``."""
    return {
        table_id_of(stored.stream_id): datetime.fromisoformat(stored.time)
        for stored in batch
        if stored.stream_id.startswith(STREAM_PREFIX)
    }


def _upsert(connection: Connection, rows: list[dict[str, Any]]) -> None:
    """Insert the rows, or update those whose table is listed at an older version."""
    if not rows:
        return
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    insert = dialect.insert(table_directory)
    fields = {name: insert.excluded[name] for name in rows[0] if name != "table_id"}
    connection.execute(
        insert.on_conflict_do_update(
            index_elements=[table_directory.c.table_id],
            set_=fields,
            where=table_directory.c.version < insert.excluded.version,
        ),
        rows,
    )


def _summary(row: Any) -> Summary:
    return Summary(
        table_id=row.table_id,
        preset=row.preset,
        options=json.loads(row.options),
        seated=row.seated,
        seat_count=row.seat_count,
        phase=row.phase,
        visibility=row.visibility,
        name=row.name,
        host_name=row.host_name,
        version=int(row.version),
    )
