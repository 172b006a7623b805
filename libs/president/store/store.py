"""``EventStore``: the one class callers use, every level of the store on SQLite or PostgreSQL."""

from __future__ import annotations

from typing import Any, Self

from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError

from president.store.backends import extra_engine_for
from president.store.engine import create_store_engine
from president.store.migrate import head_revision
from president.store.migrate import migrate as run_migrations
from president.store.records import SchemaNotReady
from president.store.tracking import TrackingRecorder

__all__ = ["EventStore"]


class EventStore(TrackingRecorder):
    """Append-only event streams with a gap-free global order and consumer tracking.

    One stream per aggregate (``"table-<id>"``), versions 1, 2, 3… per stream.
    Every method runs its own short transaction and is safe to call from many
    threads; open one store per process and share it.

    The levels, each in its module: streams with optimistic concurrency,
    idempotent appends and the hash chain (``president.store.streams``); the
    global log, ``read_all`` (``president.store.log``); consumer tracking,
    ``process`` and ``process_batch`` (``president.store.tracking``). What
    differs between SQLite and PostgreSQL is the backend's, chosen once here
    (``president.store.backends``).

    The global order is ``Position`` order. On SQLite, writers take turns, so
    row ids grow in commit order. On PostgreSQL, each row records its writing
    transaction's id, and ``read_all`` returns only rows of transactions older
    than the oldest one still running: every later commit lands after them, so
    a follower of ``read_all`` never skips a committed event. No append takes
    a table lock.

    The store remembers the last event it has seen committed in each stream
    (by appending or reading it). An append right after that event skips
    reading the stream's head and inserts in one statement; the unique
    ``(stream_id, version)`` index still refuses it if another append got
    there first. This relies on the log being append-only: events are never
    deleted.
    """

    @classmethod
    def from_url(cls, url: str | URL, *, migrate: bool = False, **engine_options: Any) -> Self:
        """Open the store in the database at ``url``.

        ``sqlite:///path.db`` or ``postgresql://user@host/db`` (driven by
        psycopg 3). With ``migrate=True`` the schema is first created or
        upgraded; otherwise it must already be at the newest migration
        (``president.store.migrate(url)``), or ``SchemaNotReady`` is raised.
        """
        if migrate:
            run_migrations(url)
        engine = create_store_engine(url, **engine_options)
        store = cls(engine, extra_engine_for(engine, url, **engine_options))
        try:
            store._check_schema()
        except BaseException:
            store.close()
            raise
        return store

    def _check_schema(self) -> None:
        head = head_revision()
        try:
            with self._reading() as connection:
                found = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
        except DBAPIError:
            found = None
        if found != head:
            where = self._engine.url.render_as_string(hide_password=True)
            raise SchemaNotReady(
                f"the event store schema at {where} is at revision {found or 'none'}, "
                f"this code needs {head}: run president.store.migrate(url) "
                "or EventStore.from_url(url, migrate=True)"
            )
