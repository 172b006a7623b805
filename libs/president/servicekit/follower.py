"""Following a table's events in version order: each event once, none skipped.

Every follower of the events stream (the gateway's feeds, the timer, scoring)
applies a table's events strictly in version order. An event at or below the
version applied is a duplicate and is dropped; one that skips ahead means
events are missing: a :class:`Gap`, filled from the table service's
``ReadEvents`` (:func:`read_gap`) before going on.

:func:`place` is that rule; each follower keeps its version where it lives
(the gateway's feed in its last entry, the timer in its clocks, scoring in
its progress rows). A follower that gets events in either order (the
gateway's feed: a command's answer and NATS bring the same events) keeps
the early ones in :class:`HeldEnvelopes` until their turn.

Each follower keeps its own delivery: scoring acknowledges a message only
after its transaction committed, the timer replays the stream before it
fires, the gateway subscribes before it reads.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from president.events.v1 import events_pb2 as pb
from president.servicekit.ports import HistoryPort


@dataclass(frozen=True)
class Gap:
    """Events of ``table_id`` after ``after_version`` are missing: read them, then go on."""

    table_id: str
    after_version: int


async def read_gap(history: HistoryPort, gap: Gap, before: int = 0) -> list[pb.EventEnvelope]:
    """The stored events that fill ``gap``: those up to ``before`` (excluded), or all (0).

    The port reads them a page at a time (``table_client.read_pages``).
    """
    limit = before - gap.after_version - 1 if before else 0
    return await history.read_events(gap.table_id, gap.after_version, limit)


class Place(enum.IntEnum):
    """Where an event's version stands against the version a follower applied."""

    SEEN = 0  # at or below it: a duplicate, dropped
    NEXT = 1  # the very next one: apply it
    AHEAD = 2  # past the next one: events before it are missing (a gap)


#: The places as plain names: an enum member looked up on its class costs more
#: than the comparison, and a follower places every event.
SEEN, NEXT, AHEAD = Place.SEEN, Place.NEXT, Place.AHEAD


def place(known: int, version: int) -> Place:
    """Where ``version`` stands for a follower that applied up to ``known``."""
    if version <= known:
        return SEEN
    return NEXT if version == known + 1 else AHEAD


class HeldEnvelopes:
    """Envelopes that came early (past a gap), kept until their turn.

    The follower keeps its own version and passes it in: it advances only
    when an envelope was really applied.
    """

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: dict[int, pb.EventEnvelope] = {}

    def hold(self, envelope: pb.EventEnvelope) -> None:
        """Keep an envelope until the ones before it are applied."""
        self._held[envelope.version] = envelope

    def take_next(self, known: int) -> pb.EventEnvelope | None:
        """The held envelope right after ``known`` (taken), if it came."""
        return self._held.pop(known + 1, None) if self._held else None

    def forget_through(self, known: int) -> None:
        """Drop the held envelopes at or below ``known`` (applied by another way)."""
        if self._held:
            for version in [v for v in self._held if v <= known]:
                del self._held[version]
