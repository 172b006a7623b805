"""Level 2 of the store: the global log, every committed event in one gap-free order.

The global order is ``Position`` order. A follower reads ``read_all`` from
the last position it got, and no event that commits later can land before a
returned one, so it sees every event exactly once. How "committed" and
"after" are decided is the backend's (``president.store.sqlite``: row ids in
commit order; ``president.store.postgres``: the transaction horizon).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, select

from president.store.recorder import EVENT_COLUMNS, stored_event
from president.store.records import Position, StoredEvent
from president.store.streams import StreamRecorder


class LogRecorder(StreamRecorder):
    """Streams, and every committed event of all of them in the global order."""

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
        backend = self._backend
        query: Select[Any] = (
            select(*EVENT_COLUMNS)
            .limit(limit)
            .where(*backend.committed_after(after or Position.START))
            .order_by(*backend.global_order)
        )
        with self._reading() as connection:
            return [stored_event(row) for row in connection.execute(query)]
