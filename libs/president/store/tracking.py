"""Level 3 of the store: consumers that process the global log, each event exactly once.

A consumer (a projection, the outbox relay) keeps its position in the
``tracking`` table. ``process`` hands it the events after that position and
moves the position in the same transaction as the handler's writes, so
across crashes and restarts each event is processed once. Instances of one
consumer take turns on its lock (the backend's ``lock_consumer``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, bindparam, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from president.store.log import LogRecorder
from president.store.recorder import check_id
from president.store.records import Position, StoredEvent
from president.store.schema import events as events_table
from president.store.schema import tracking

Handler = Callable[[StoredEvent, Connection], None]
"""A consumer's handler: one event, and the connection of the transaction that tracks it."""

BatchHandler = Callable[[list[StoredEvent], Connection], None]
"""A consumer's batch handler: events in order, and the connection that tracks them."""

_POSITION_OF = select(tracking.c.position_tx, tracking.c.position_id).where(
    tracking.c.consumer == bindparam("consumer")
)


class TrackingRecorder(LogRecorder):
    """The global log, and consumers' positions in it."""

    def __init__(self, engine: Engine, autocommit_engine: Engine | None = None) -> None:
        super().__init__(engine, autocommit_engine)
        # Consumers whose tracking row this store has seen or written.
        self._tracking_rows: set[str] = set()

    def tracked_position(self, consumer: str) -> Position:
        """The position of the last event ``consumer`` processed (``Position.START`` if none)."""
        with self._reading() as connection:
            row = connection.execute(_POSITION_OF, {"consumer": consumer}).first()
        return Position.START if row is None else Position(int(row[0]), int(row[1]))

    def process(
        self,
        consumer: str,
        handler: Handler,
        *,
        source: LogRecorder | None = None,
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
        source: LogRecorder | None = None,
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

    def commit_from(
        self,
        consumer: str,
        after: Position,
        last: Position,
        write: Callable[[Connection], None],
    ) -> bool:
        """Move ``consumer`` from ``after`` to ``last`` with ``write``'s writes, in one
        transaction, unless another instance moved it first (then False, nothing written).

        For a consumer that read its batch itself (``read_all`` from ``after``) and
        worked on it outside the transaction, so its batch is read once.
        """
        check_id("consumer name", consumer)
        self._ensure_tracking_row(consumer)
        with self._tracking_lock(consumer) as (connection, current):
            if current != after:
                return False
            write(connection)
            _advance(connection, consumer, last)
        return True

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
        check_id("consumer name", consumer)
        self._ensure_tracking_row(consumer)
        with self._tracking_lock(consumer) as (connection, current):
            ahead = sorted({position for position in positions if position > current})
            if not ahead:
                return current
            last = ahead[-1]
            query = (
                select(func.count())
                .select_from(events_table)
                .where(*self._backend.committed_between(current, last))
            )
            if connection.execute(query).scalar_one() != len(ahead):
                return None
            _advance(connection, consumer, last)
        return last

    def _unprocessed(
        self, consumer: str, source: LogRecorder | None, limit: int
    ) -> list[StoredEvent]:
        check_id("consumer name", consumer)
        self._ensure_tracking_row(consumer)
        return (source or self).read_all(self.tracked_position(consumer), limit)

    @contextmanager
    def _tracking_lock(self, consumer: str) -> Iterator[tuple[Connection, Position]]:
        """A transaction holding ``consumer``'s lock, and its position read after taking it."""
        with self._writers, self._engine.begin() as connection:
            self._backend.lock_consumer(connection, consumer)
            row = connection.execute(_POSITION_OF, {"consumer": consumer}).one()
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


def _advance(connection: Connection, consumer: str, position: Position) -> None:
    connection.execute(
        update(tracking)
        .where(tracking.c.consumer == consumer)
        .values(position_tx=position.transaction, position_id=position.id)
    )
