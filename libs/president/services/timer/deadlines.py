"""The timer's board of running deadlines, and the tables it follows to keep it.

The deadline rules themselves are :mod:`president.hosting.deadlines`.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from president import codec
from president.events.v1 import events_pb2 as pb
from president.hosting.deadlines import (
    Deadline,
    IdleRules,
    TableClock,
    advance,
    event_time,
    start_clock,
)
from president.hosting.events import TableCreated
from president.hosting.streams import table_id_of
from president.servicekit.follower import AHEAD, SEEN, Gap, place
from president.servicekit.partition import Partition

#: A live event's stamp further than this from the timer's clock is not trusted: a deadline
#: starts when the timer got the event (a delivery takes milliseconds; clocks kept by NTP
#: agree to milliseconds too).
STAMP_TOLERANCE_SECONDS = 2.0


@dataclass
class DeadlineBoard:
    """One deadline per table, soonest first. Plain data; the scheduler owns the waiting."""

    _by_table: dict[str, Deadline] = field(default_factory=dict)
    _heap: list[tuple[datetime, int, Deadline]] = field(default_factory=list)
    _sequence: int = 0

    def put(self, table_id: str, due: Deadline | None) -> bool:
        """Replace the table's deadline; whether anything changed."""
        current = self._by_table.get(table_id)
        if current == due:
            return False
        if due is None:
            del self._by_table[table_id]
            return True
        self._by_table[table_id] = due
        self._sequence += 1
        heapq.heappush(self._heap, (due.expires_at, self._sequence, due))
        if len(self._heap) > 4 * len(self._by_table) + 64:
            self._compact()
        return True

    def get(self, table_id: str) -> Deadline | None:
        return self._by_table.get(table_id)

    def __len__(self) -> int:
        return len(self._by_table)

    def __iter__(self) -> Iterator[Deadline]:
        """Every deadline, soonest first."""
        return iter(sorted(self._by_table.values(), key=lambda due: (due.expires_at, due.table_id)))

    def overdue(self, now: datetime) -> float:
        """How many seconds the most overdue deadline is past ``now`` (0: none is due).

        Read by the metrics thread (``president_timer_overdue_seconds``): it copies the
        deadlines first, so the scheduler may change the board meanwhile."""
        for _ in range(3):
            try:
                deadlines = list(self._by_table.values())
                break
            except RuntimeError:  # changed while copied: copy again
                continue
        else:
            return 0.0
        if not deadlines:
            return 0.0
        soonest = min(due.expires_at for due in deadlines)
        return max(0.0, (now - soonest).total_seconds())

    def next(self, skip: set[tuple[str, int, int, int, str]] | None = None) -> Deadline | None:
        """The soonest deadline whose key is not in ``skip`` (in flight or already fired)."""
        skip = skip or set()
        held: list[tuple[datetime, int, Deadline]] = []
        found = None
        while self._heap:
            entry = self._heap[0]
            due = entry[2]
            if self._by_table.get(due.table_id) != due:
                heapq.heappop(self._heap)  # replaced or removed since
                continue
            if due.key in skip:
                held.append(heapq.heappop(self._heap))
                continue
            found = due
            break
        for entry in held:
            heapq.heappush(self._heap, entry)
        return found

    def _compact(self) -> None:
        self._heap = [
            entry for entry in self._heap if self._by_table.get(entry[2].table_id) == entry[2]
        ]
        heapq.heapify(self._heap)


class Clocks:
    """Every table of this partition folded from its events, and the board of their deadlines.

    Events of a table must come in version order: a repeated one is ignored,
    a missing one is reported as a :class:`Gap` for the caller to fill.

    The stream brings a table's events in version order too, so one of its
    events at or below the version the stream brought last, with another
    hash, means the table's history was rewound (a database that failed over
    to a standby without its last commits gave those versions to new events,
    and the stream keeps both histories, the lost one first): the table is
    forgotten and read again from the store (a :class:`Gap` from version 0).
    """

    def __init__(
        self,
        board: DeadlineBoard,
        partition: Partition | None = None,
        idle: IdleRules | None = None,
    ) -> None:
        self.board = board
        self.partition = partition or Partition()
        #: How long waiting tables wait before they move on (None: they wait for the host).
        self.idle = idle
        self._clocks: dict[str, TableClock] = {}
        # Table id -> when its last event was applied (the caller's clock).
        self._applied_at: dict[str, datetime] = {}
        # Table id -> the version and hash of the event the stream brought last.
        self._streamed: dict[str, tuple[int, str]] = {}

    def version(self, table_id: str) -> int:
        """The last version folded for the table (0: unknown)."""
        clock = self._clocks.get(table_id)
        return clock.version if clock is not None else 0

    def __len__(self) -> int:
        return len(self._clocks)

    def apply(
        self,
        envelope: pb.EventEnvelope,
        fallback_time: datetime,
        *,
        streamed: bool = False,
        live: bool = False,
    ) -> Gap | None:
        """Fold one event into its table; a :class:`Gap` when earlier events are missing
        (from version 0 when the ``streamed`` event shows the history rewound).

        A deadline the event starts runs from the time stamped on it (``fallback_time``
        without one); ``live``, from ``fallback_time`` (now) when the stamp is further from
        it than :data:`STAMP_TOLERANCE_SECONDS`: another machine's clock moves no deadline
        (see :mod:`president.services.timer.follower`)."""
        table_id = table_id_of(envelope.stream_id)
        if not self.partition.owns(table_id):
            return None
        if streamed:
            last = self._streamed.get(table_id)
            mark = (envelope.version, envelope.hash)
            if last is not None and envelope.version <= last[0] and last != mark:
                self.forget(table_id)  # rewound: read again from the store
                self._streamed[table_id] = mark
                return Gap(table_id, 0)
            self._streamed[table_id] = mark
        known = self.version(table_id)
        where = place(known, envelope.version)
        if where is SEEN:
            return None  # delivered again
        if where is AHEAD:
            return Gap(table_id, known)
        event = codec.decode(envelope.type, envelope.payload)
        clock = self._clocks.get(table_id)
        if clock is None:
            if not isinstance(event, TableCreated):
                raise ValueError(
                    f"table {table_id}: version 1 is {envelope.type}, not TableCreated"
                )
            clock = start_clock(event, self.idle)
        else:
            at = event_time(envelope, fallback_time)
            if live and abs((fallback_time - at).total_seconds()) > STAMP_TOLERANCE_SECONDS:
                at = fallback_time  # another machine's clock, or a late delivery
            clock = advance(clock, event, envelope.version, at)
        self._clocks[table_id] = clock
        self._applied_at[table_id] = fallback_time
        self.board.put(table_id, clock.deadline)
        return None

    def forget_idle(self, before: datetime) -> list[str]:
        """Drop the tables with no deadline whose last event came before ``before``.

        Their next event finds no history here and reads it from the table
        service (a :class:`Gap` from version 0), so nothing is lost but memory.
        """
        idle = [
            table_id
            for table_id, at in self._applied_at.items()
            if at < before and self.board.get(table_id) is None
        ]
        for table_id in idle:
            self.forget(table_id)
        return idle

    def forget(self, table_id: str) -> None:
        """Drop a table (it is gone, or its history could not be read): no deadline for it."""
        self._clocks.pop(table_id, None)
        self._applied_at.pop(table_id, None)
        self._streamed.pop(table_id, None)
        self.board.put(table_id, None)
