"""Order per table across lease takeovers: the fast path publishes a table's event only
right after the one before it went out here (:class:`PublishedHeads`).

A replica that takes a table over may find events the dead holder committed
and never published; the relay loop publishes them in the store's global
order, but the fast path would publish the new holder's own events at once,
before them. So the fast path sends ``(stream, version)`` only when this relay
saw ``version - 1`` acknowledged (or it is version 1); anything else is left
to the loop, which sends it in order. The first event of a table after a
replica starts goes through the loop once; after that the fast path serves it.
"""

from __future__ import annotations

from collections.abc import Sequence

from president.store import StoredEvent


class PublishedHeads:
    """The highest version of each stream this relay knows JetStream has, in order."""

    def __init__(self) -> None:
        self._heads: dict[str, int] = {}

    def published(self, stored: StoredEvent) -> None:
        """JetStream acknowledged ``stored`` (or the loop found it published)."""
        if stored.version > self._heads.get(stored.stream_id, 0):
            self._heads[stored.stream_id] = stored.version

    def in_order(self, events: Sequence[StoredEvent]) -> list[StoredEvent]:
        """The events the fast path may publish now: each right after its stream's head (or
        the event before it in ``events``); the rest is the loop's."""
        running: dict[str, int] = {}
        ready: list[StoredEvent] = []
        for stored in events:
            stream = stored.stream_id
            head = running.get(stream, self._heads.get(stream, 0))
            if stored.version == head + 1:
                running[stream] = stored.version
                ready.append(stored)
            else:
                running[stream] = -1  # held back: none of this stream's later ones either
        return ready

    def forget(self, stream_id: str) -> None:
        """Drop a stream's head (its next event goes through the loop once)."""
        self._heads.pop(stream_id, None)
