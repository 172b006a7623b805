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
from president.store.schema import events as events_table
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

    def read_all_of_type(
        self, after: Position, event_type: str
    ) -> tuple[list[StoredEvent], Position]:
        """The committed events of one type after ``after``, and the newest committed
        position now (``after`` itself when nothing committed since).

        For a follower that needs one rare type: it reads the few events it wants, not
        every one, and moves on to the returned position. No event of that type can
        commit later at or before that position (the global order's promise).
        """
        backend = self._backend
        newest_query: Select[Any] = (
            select(events_table.c.tx_id, events_table.c.id)
            .where(*backend.committed_after(after))
            .order_by(*(column.desc() for column in backend.global_order))
            .limit(1)
        )
        with self._reading() as connection:
            newest = connection.execute(newest_query).first()
            if newest is None:
                return [], after
            last = Position(int(newest.tx_id), int(newest.id))
            query: Select[Any] = (
                select(*EVENT_COLUMNS)
                .where(*backend.committed_between(after, last), events_table.c.type == event_type)
                .order_by(*backend.global_order)
            )
            return [stored_event(row) for row in connection.execute(query)], last
