"""What the event followers (timer, scoring) need from the table service, as protocols."""

from __future__ import annotations

from typing import Protocol

from president.events.v1 import events_pb2 as pb


class HistoryPort(Protocol):
    """Where a table's stored events can be read again."""

    async def read_events(
        self, table_id: str, after_version: int, limit: int = 0
    ) -> list[pb.EventEnvelope]:
        """The table's events after ``after_version``."""
