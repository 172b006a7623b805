"""``EventStore``: append-only streams on SQLite or PostgreSQL, through one code path."""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime
from types import MappingProxyType, TracebackType
from typing import Any, Self

from sqlalchemy import (
    BigInteger,
    Connection,
    Engine,
    Row,
    Select,
    bindparam,
    func,
    insert,
    literal_column,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.engine import URL, Dialect
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.sql.elements import ColumnClause

from president.store.chain import GENESIS_HASH, hash_canonical
from president.store.engine import create_store_engine
from president.store.group_commit import GroupCommit
from president.store.migrate import head_revision
from president.store.migrate import migrate as run_migrations
from president.store.records import (
    JSON,
    AppendResult,
    CommandIdReused,
    ConcurrencyConflict,
    NewEvent,
    Position,
    SchemaNotReady,
    StoredEvent,
    canonical_json,
    json_object,
)
from president.store.schema import events as events_table
from president.store.schema import tracking

Handler = Callable[[StoredEvent, Connection], None]
"""A consumer's handler: one event, and the connection of the transaction that tracks it."""

BatchHandler = Callable[[list[StoredEvent], Connection], None]
"""A consumer's batch handler: events in order, and the connection that tracks them."""

MAX_ID_LENGTH = 200

_EVENT_COLUMNS = (
    events_table.c.stream_id,
    events_table.c.version,
    events_table.c.type,
    events_table.c.payload,
    events_table.c.metadata,
    events_table.c.tx_id,
    events_table.c.id,
    events_table.c.hash,
    events_table.c.previous_hash,
)

# PostgreSQL: every transaction older than this one has ended (committed or not).
_PG_VISIBLE_BELOW: ColumnClause[int] = literal_column(
    "pg_snapshot_xmin(pg_current_snapshot())::text::bigint", BigInteger
)


_STREAM_HEAD = (
    select(events_table.c.version, events_table.c.hash)
    .where(events_table.c.stream_id == bindparam("stream_id"))
    .order_by(events_table.c.version.desc())
    .limit(1)
)
_INSERT_EVENTS = insert(events_table).returning(
    events_table.c.tx_id, events_table.c.id, sort_by_parameter_order=True
)
_KNOWN_HEADS = 100_000
_ONE_STATEMENT_ROWS = 100  # 900 parameters; far from either database's limit


_ADVISORY_LOCK = text("SELECT pg_advisory_xact_lock(:key)")


def _lock_key(consumer: str) -> int:
    """The PostgreSQL advisory lock key of a consumer (a collision only makes two wait)."""
    digest = hashlib.sha256(f"president.store.tracking:{consumer}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _advance(connection: Connection, consumer: str, position: Position) -> None:
    connection.execute(
        update(tracking)
        .where(tracking.c.consumer == consumer)
        .values(position_tx=position.transaction, position_id=position.id)
    )


class _StaleVersion(Exception):
    def __init__(self, actual: int) -> None:
        self.actual = actual


class EventStore:
    """Append-only event streams with a gap-free global order and consumer tracking.

    One stream per aggregate (``"table-<id>"``), versions 1, 2, 3… per stream.
    Every method runs its own short transaction and is safe to call from many
    threads; open one store per process and share it.

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

    def __init__(self, engine: Engine, autocommit_engine: Engine | None = None) -> None:
        """Use ``engine`` (see ``create_store_engine``); ``from_url`` is the usual door.

        On PostgreSQL, appends that are one statement run on ``autocommit_engine``
        if given (an engine on the same database with
        ``isolation_level="AUTOCOMMIT"`` and its own pool), which saves the
        BEGIN and COMMIT round trips; otherwise on ``engine``, in a transaction.
        """
        self._engine = engine
        self._postgres = engine.dialect.name == "postgresql"
        self._autocommit = autocommit_engine or engine
        # Stream id -> (version, hash) of an event known to be committed.
        self._known_heads: dict[str, tuple[int, str]] = {}
        # Consumers whose tracking row this store has seen or written.
        self._tracking_rows: set[str] = set()
        # SQLite lets one writer in at a time, and its busy handler makes a waiting
        # writer sleep in steps of up to 100 ms: under many writers that became
        # seconds of tail latency. So this process's writers queue here instead.
        self._writers: AbstractContextManager[Any] = (
            nullcontext() if self._postgres else threading.RLock()
        )
        # SQLite: appends that queue for the writer commit together (one disk flush).
        self._group = None if self._postgres else GroupCommit(engine, self._writers)

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
        autocommit = None
        if engine.dialect.name == "postgresql":
            # Nothing to reset on return: no transaction is ever open there.
            autocommit = create_store_engine(
                url,
                **{**engine_options, "isolation_level": "AUTOCOMMIT", "pool_reset_on_return": None},
            )
        store = cls(engine, autocommit)
        try:
            store._check_schema()
        except BaseException:
            store.close()
            raise
        return store

    @property
    def group_commit(self) -> GroupCommit | None:
        """SQLite: the group commit its appends go through (None on PostgreSQL)."""
        return self._group

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (for tests and for consumers' own tables)."""
        return self._engine

    def close(self) -> None:
        """Close every pooled connection."""
        self._engine.dispose()
        self._autocommit.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------

    def append(
        self,
        stream_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        command_id: str,
        *,
        time: datetime | None = None,
    ) -> AppendResult:
        """Append events to a stream that is at ``expected_version``, all or nothing.

        ``expected_version`` is the stream's current version (0 for a new
        stream); the events get the versions after it. Each event's metadata
        gets the ``command_id`` and the ``time`` (ISO 8601; default: now, UTC).

        The command id makes the append idempotent: appending the same command
        id again, from any process, writes nothing and returns the first
        append's result. Raises ``ConcurrencyConflict`` when the stream is at
        another version (nothing is written), ``CommandIdReused`` when the
        command id already wrote to another stream, ``ValueError`` on bad input.
        """
        _check_id("stream id", stream_id)
        _check_id("command id", command_id)
        if isinstance(expected_version, bool) or not isinstance(expected_version, int):
            raise TypeError(f"expected_version is an int, got {expected_version!r}")
        if expected_version < 0:
            raise ValueError(f"expected_version is 0 or more, got {expected_version}")
        if not events:
            raise ValueError(f"nothing to append to {stream_id!r}: give at least one event")
        for item in events:
            if not isinstance(item, NewEvent):
                raise TypeError(f"append takes NewEvent values, got {type(item).__name__}")
        stamp = _iso_time(time)
        metadata_texts = [
            canonical_json(_stamped(item.metadata, command_id, stamp)) for item in events
        ]

        def rows_after(previous_hash: str) -> list[dict[str, Any]]:
            rows = []
            for seq, (item, metadata_text) in enumerate(zip(events, metadata_texts, strict=True)):
                version = expected_version + 1 + seq
                digest = hash_canonical(
                    stream_id, version, item.type, item.payload, metadata_text, previous_hash
                )
                rows.append(
                    {
                        "stream_id": stream_id,
                        "version": version,
                        "type": item.type,
                        "payload": item.payload,
                        "metadata": metadata_text,
                        "command_id": command_id,
                        "command_seq": seq,
                        "hash": digest,
                        "previous_hash": previous_hash,
                    }
                )
                previous_hash = digest
            return rows

        known = self._known_heads.get(stream_id)
        try:
            if (
                known is not None
                and known[0] == expected_version
                and len(events) <= _ONE_STATEMENT_ROWS
            ):
                # The event at expected_version exists and has this hash: insert
                # right after it; if another append got there first, the unique
                # (stream_id, version) index refuses the rows.
                rows = rows_after(known[1])
                inserted = self._insert_at_once(rows)
            else:
                with self._writers, self._engine.begin() as connection:
                    head = connection.execute(_STREAM_HEAD, {"stream_id": stream_id}).first()
                    actual = 0 if head is None else int(head.version)
                    if actual != expected_version:
                        raise _StaleVersion(actual)
                    rows = rows_after(GENESIS_HASH if head is None else str(head.hash))
                    inserted = [
                        (int(row.tx_id), int(row.id))
                        for row in connection.execute(_INSERT_EVENTS, rows)
                    ]
        except _StaleVersion as stale:
            earlier = self._command_result(command_id, stream_id)
            if earlier is not None:
                return earlier
            raise ConcurrencyConflict(stream_id, expected_version, stale.actual) from None
        except IntegrityError:
            # Another append took these versions, or this command id, first.
            earlier = self._command_result(command_id, stream_id)
            if earlier is not None:
                return earlier
            actual = self.current_version(stream_id)
            raise ConcurrencyConflict(stream_id, expected_version, actual) from None
        self._remember_head(stream_id, rows[-1]["version"], rows[-1]["hash"])
        positions = tuple(Position(tx_id, row_id) for tx_id, row_id in inserted)
        return AppendResult(
            stream_id=stream_id,
            first_version=expected_version + 1,
            last_version=expected_version + len(rows),
            positions=positions,
            events=tuple(
                StoredEvent(
                    stream_id=stream_id,
                    version=row["version"],
                    type=row["type"],
                    payload=row["payload"],
                    metadata=MappingProxyType(json_object(row["metadata"])),
                    position=position,
                    hash=row["hash"],
                    previous_hash=row["previous_hash"],
                )
                for row, position in zip(rows, positions, strict=True)
            ),
        )

    def _insert_at_once(self, rows: list[dict[str, Any]]) -> list[tuple[int, int]]:
        """Insert ``rows`` in one statement, committed; return their (transaction, id) in order.

        The append hot path, so it skips SQLAlchemy's ``Connection`` layer (about
        60 µs of CPU per append, which is what limits throughput with many
        writers) and runs SQLAlchemy-compiled SQL on a pooled DBAPI connection:
        on PostgreSQL, autocommitted (the statement is its own transaction, no
        BEGIN/COMMIT round trips); on SQLite, through the group commit, which
        lets appends that wait for the writer share one transaction. DBAPI
        errors come out as SQLAlchemy's (``IntegrityError`` and so on).
        """
        engine = self._autocommit if self._postgres else self._engine
        statement, order = _insert_sql(engine.dialect, len(rows))
        named = {f"{key}_{i}": value for i, row in enumerate(rows) for key, value in row.items()}
        parameters: Any = tuple(named[name] for name in order) if order else named
        if self._group is not None:
            returned = self._group.run((statement, parameters))
            return [(int(tx_id), int(row_id)) for _, tx_id, row_id in returned]
        pooled = engine.raw_connection()
        autocommitted = bool(pooled.driver_connection.autocommit)  # type: ignore[union-attr]
        cursor = None
        try:
            cursor = pooled.cursor()
            cursor.execute(statement, parameters)
            returned = sorted(cursor.fetchall())
            if not autocommitted:
                pooled.commit()
        except engine.dialect.loaded_dbapi.Error as error:
            if engine.dialect.is_disconnect(error, pooled, cursor):
                pooled.invalidate(error)
            elif not autocommitted:
                pooled.rollback()
            raise DBAPIError.instance(
                statement, parameters, error, engine.dialect.loaded_dbapi.Error
            ) from error
        finally:
            if cursor is not None:
                cursor.close()
            pooled.close()
        return [(int(tx_id), int(row_id)) for _, tx_id, row_id in returned]

    def _remember_head(self, stream_id: str, version: int, digest: str) -> None:
        """Note a committed event; appends after it can skip reading the stream's head."""
        known = self._known_heads.get(stream_id)
        if known is not None and known[0] >= version:
            return
        if len(self._known_heads) >= _KNOWN_HEADS and stream_id not in self._known_heads:
            self._known_heads.clear()
        self._known_heads[stream_id] = (version, digest)

    def command_result(self, command_id: str, stream_id: str) -> AppendResult | None:
        """What the append of ``command_id`` wrote to ``stream_id``, or None if it never ran.

        Lets a service answer a retried command with its first result before
        deciding it again. Raises ``CommandIdReused`` if the id wrote to another stream.
        """
        return self._command_result(command_id, stream_id)

    def _command_result(self, command_id: str, stream_id: str) -> AppendResult | None:
        with self._reading() as connection:
            found = connection.execute(
                select(
                    events_table.c.stream_id,
                    events_table.c.version,
                    events_table.c.tx_id,
                    events_table.c.id,
                )
                .where(events_table.c.command_id == command_id)
                .order_by(events_table.c.command_seq)
            ).all()
        if not found:
            return None
        first_stream = str(found[0].stream_id)
        if first_stream != stream_id:
            raise CommandIdReused(command_id, stream_id, first_stream)
        return AppendResult(
            stream_id=stream_id,
            first_version=int(found[0].version),
            last_version=int(found[-1].version),
            positions=tuple(Position(int(row.tx_id), int(row.id)) for row in found),
        )

    # -- reading ---------------------------------------------------------------

    def current_version(self, stream_id: str) -> int:
        """The stream's version: its last event's version, 0 if it has none."""
        with self._reading() as connection:
            version = connection.execute(
                select(func.max(events_table.c.version)).where(
                    events_table.c.stream_id == stream_id
                )
            ).scalar()
        return 0 if version is None else int(version)

    def read_stream(
        self, stream_id: str, from_version: int = 1, limit: int | None = None
    ) -> list[StoredEvent]:
        """The stream's events from ``from_version`` on (at most ``limit``), in version order."""
        query = (
            select(*_EVENT_COLUMNS)
            .where(events_table.c.stream_id == stream_id, events_table.c.version >= from_version)
            .order_by(events_table.c.version)
        )
        if limit is not None:
            query = query.limit(limit)
        with self._reading() as connection:
            stored = [_stored(row) for row in connection.execute(query)]
        if stored:
            self._remember_head(stream_id, stored[-1].version, stored[-1].hash)
        return stored

    def read_stream_backwards(
        self,
        stream_id: str,
        types: Collection[str],
        before_version: int | None = None,
        limit: int = 100,
    ) -> list[StoredEvent]:
        """The stream's events of ``types`` (full type names), newest first, at most ``limit``.

        Only those before ``before_version`` when given: pass the last one's
        version to read on. The database skips the other events, so looking
        for a few kinds of event near the end of a long stream stays cheap.
        """
        query = select(*_EVENT_COLUMNS).where(
            events_table.c.stream_id == stream_id, events_table.c.type.in_(list(types))
        )
        if before_version is not None:
            query = query.where(events_table.c.version < before_version)
        query = query.order_by(events_table.c.version.desc()).limit(limit)
        with self._reading() as connection:
            return [_stored(row) for row in connection.execute(query)]

    def read_all(self, after: Position | None = None, limit: int = 1000) -> list[StoredEvent]:
        """Up to ``limit`` committed events after position ``after`` (``None``: from the start).

        Positions grow in the returned order; read again from the last
        returned event's position to follow the store. No event that commits
        later can land before a returned one, so a follower sees every event
        exactly once. Within a stream the order is the version order.

        On PostgreSQL an event shows up once every transaction that started
        before its own has ended, so one long-running transaction on the
        server delays (never loses) events for every follower.
        """
        if limit < 1:
            raise ValueError(f"limit is 1 or more, got {limit}")
        start = after or Position.START
        query: Select[Any] = select(*_EVENT_COLUMNS).limit(limit)
        if self._postgres:
            query = query.where(
                tuple_(events_table.c.tx_id, events_table.c.id)
                > tuple_(start.transaction, start.id),
                events_table.c.tx_id < select(_PG_VISIBLE_BELOW).scalar_subquery(),
            ).order_by(events_table.c.tx_id, events_table.c.id)
        else:
            # Every SQLite row is in transaction 0 and ids follow the commit
            # order; a search on the rowid alone is what SQLite does fast.
            query = query.where(events_table.c.id > start.id).order_by(events_table.c.id)
        with self._reading() as connection:
            return [_stored(row) for row in connection.execute(query)]

    # -- tracking --------------------------------------------------------------

    def tracked_position(self, consumer: str) -> Position:
        """The position of the last event ``consumer`` processed (``Position.START`` if none)."""
        with self._reading() as connection:
            row = connection.execute(
                select(tracking.c.position_tx, tracking.c.position_id).where(
                    tracking.c.consumer == consumer
                )
            ).first()
        return Position.START if row is None else Position(int(row[0]), int(row[1]))

    def process(
        self,
        consumer: str,
        handler: Handler,
        *,
        source: EventStore | None = None,
        limit: int = 100,
    ) -> int:
        """Hand ``consumer`` the next events it has not processed; returns how many it handled.

        Reads up to ``limit`` events after the consumer's tracked position from
        ``source`` (default: this store). For each event, in one transaction
        of this store's database: take the consumer's lock, call
        ``handler(event, connection)``, and advance the consumer's position.
        Whatever the handler writes with ``connection`` commits together with
        the new position, so across crashes and restarts each event is
        processed exactly once. If the handler raises, its writes and the
        position roll back and the exception propagates; the next call retries
        that event.

        A consumer with its own database opens a store on it (migrated, for the
        tracking table) and passes the event store as ``source``. Two instances
        of one consumer may run at once: they take turns on the lock and skip
        what the other already tracked. Keep handlers short: on SQLite their
        transaction holds the write lock, and on PostgreSQL, once it has
        written, it holds back ``read_all`` for every follower until it ends.
        """
        handled = 0
        for stored in self._unprocessed(consumer, source, limit):
            with self._tracking_lock(consumer) as (connection, current):
                if stored.position <= current:
                    continue  # another instance of this consumer got there first
                handler(stored, connection)
                _advance(connection, consumer, stored.position)
            handled += 1
        return handled

    def process_batch(
        self,
        consumer: str,
        handler: BatchHandler,
        *,
        source: EventStore | None = None,
        limit: int = 100,
    ) -> int:
        """Like ``process``, but all of up to ``limit`` events in one transaction.

        Calls ``handler(events, connection)`` once with the events after the
        consumer's position, and advances the position past the last of them
        in the same transaction: faster for a consumer catching up, and an
        exception rolls back the whole batch. Returns how many events it handled.
        """
        batch = self._unprocessed(consumer, source, limit)
        if not batch:
            return 0
        with self._tracking_lock(consumer) as (connection, current):
            fresh = [stored for stored in batch if stored.position > current]
            if not fresh:
                return 0
            handler(fresh, connection)
            _advance(connection, consumer, fresh[-1].position)
        return len(fresh)

    def advance_over(self, consumer: str, positions: Sequence[Position]) -> Position | None:
        """Move ``consumer`` past ``positions`` without reading them, if nothing else lies between.

        For a consumer that already handled these events another way (the
        outbox relay's fast path had them acknowledged): in one transaction,
        if the committed events after the consumer's position up to the
        greatest of ``positions`` are exactly those of ``positions`` after it
        (one count, no event read), the position moves to that greatest one.
        Returns the consumer's position then, or None, moving nothing, when
        other events lie between (the caller reads them with ``process_batch``).
        """
        _check_id("consumer name", consumer)
        self._ensure_tracking_row(consumer)
        with self._tracking_lock(consumer) as (connection, current):
            ahead = sorted({position for position in positions if position > current})
            if not ahead:
                return current
            last = ahead[-1]
            query = select(func.count()).select_from(events_table)
            if self._postgres:
                query = query.where(
                    tuple_(events_table.c.tx_id, events_table.c.id)
                    > tuple_(current.transaction, current.id),
                    tuple_(events_table.c.tx_id, events_table.c.id)
                    <= tuple_(last.transaction, last.id),
                    events_table.c.tx_id < select(_PG_VISIBLE_BELOW).scalar_subquery(),
                )
            else:
                query = query.where(events_table.c.id > current.id, events_table.c.id <= last.id)
            if connection.execute(query).scalar_one() != len(ahead):
                return None
            _advance(connection, consumer, last)
        return last

    def _unprocessed(
        self, consumer: str, source: EventStore | None, limit: int
    ) -> list[StoredEvent]:
        _check_id("consumer name", consumer)
        self._ensure_tracking_row(consumer)
        return (source or self).read_all(self.tracked_position(consumer), limit)

    @contextmanager
    def _tracking_lock(self, consumer: str) -> Iterator[tuple[Connection, Position]]:
        """A transaction holding ``consumer``'s lock, and its position read after taking it.

        PostgreSQL: an advisory lock, which (unlike ``SELECT ... FOR UPDATE``)
        gives the transaction no id, so a handler that has not written yet
        does not hold back ``read_all``. SQLite: ``BEGIN IMMEDIATE`` already
        lets one writer in at a time.
        """
        with self._writers, self._engine.begin() as connection:
            if self._postgres:
                connection.execute(_ADVISORY_LOCK, {"key": _lock_key(consumer)})
            row = connection.execute(
                select(tracking.c.position_tx, tracking.c.position_id).where(
                    tracking.c.consumer == consumer
                )
            ).one()
            yield connection, Position(int(row[0]), int(row[1]))

    def _ensure_tracking_row(self, consumer: str) -> None:
        if consumer in self._tracking_rows:
            return  # tracking rows are never deleted
        with self._reading() as connection:
            exists = connection.execute(
                select(tracking.c.consumer).where(tracking.c.consumer == consumer)
            ).first()
        if exists is None:
            try:
                with self._writers, self._engine.begin() as connection:
                    connection.execute(
                        insert(tracking).values(
                            consumer=consumer,
                            position_tx=Position.START.transaction,
                            position_id=Position.START.id,
                        )
                    )
            except IntegrityError:
                pass  # another instance created it
        self._tracking_rows.add(consumer)

    # -- plumbing --------------------------------------------------------------

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        with (
            self._engine.connect().execution_options(sqlite_begin="DEFERRED") as connection,
            connection.begin(),
        ):
            yield connection

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


def _check_id(what: str, value: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"a {what} is a string, got {type(value).__name__}")
    if not value or len(value) > MAX_ID_LENGTH:
        raise ValueError(f"a {what} has 1 to {MAX_ID_LENGTH} characters, got {value!r}")


def _iso_time(time: datetime | None) -> str:
    if time is None:
        return datetime.now(UTC).isoformat()
    if time.tzinfo is None or time.utcoffset() is None:
        raise ValueError(f"the append time needs a time zone, got {time.isoformat()}")
    return time.isoformat()


def _stamped(metadata: Any, command_id: str, time: str) -> dict[str, JSON]:
    stamped: dict[str, JSON] = dict(metadata)
    for key, value in (("command_id", command_id), ("time", time)):
        given = stamped.get(key)
        if given is not None and given != value:
            raise ValueError(
                f"event metadata has {key}={given!r} but the append is for {value!r}: "
                f"leave {key!r} out, the store sets it"
            )
        stamped[key] = value
    return stamped


def _stored(row: Row[*tuple[Any, ...]]) -> StoredEvent:
    return StoredEvent(
        stream_id=row.stream_id,
        version=int(row.version),
        type=row.type,
        payload=bytes(row.payload),
        metadata=MappingProxyType(json_object(row.metadata)),
        position=Position(int(row.tx_id), int(row.id)),
        hash=row.hash,
        previous_hash=row.previous_hash,
    )


_EVENT_KEYS = (
    "stream_id",
    "version",
    "type",
    "payload",
    "metadata",
    "command_id",
    "command_seq",
    "hash",
    "previous_hash",
)


@functools.lru_cache(maxsize=256)
def _insert_sql(dialect: Dialect, rows: int) -> tuple[str, tuple[str, ...]]:
    """``INSERT INTO events ... VALUES (...) x rows RETURNING version, tx_id, id`` for
    ``dialect``, with parameters named ``<column>_<row>``; and their order if the
    driver takes them by position."""
    statement = insert(events_table).values(
        [{key: bindparam(f"{key}_{i}") for key in _EVENT_KEYS} for i in range(rows)]
    )
    compiled = statement.returning(
        events_table.c.version, events_table.c.tx_id, events_table.c.id
    ).compile(dialect=dialect)
    return str(compiled), tuple(compiled.positiontup or ())
