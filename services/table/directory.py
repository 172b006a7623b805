"""Which tables exist: a small in-memory index for ``ListTables``.

Built by reading the store's global order once at start, then brought up to
date before each listing (only the events appended since, by any replica),
and told of each table this replica changes as soon as it changes.
Each table is folded with the engine, so its phase and seats are exactly
what the table service itself sees. Nothing here is stored: a restart
rebuilds it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from president import codec
from president.events.v1 import events_pb2 as pb
from president.store import EventStore, Position
from president.tables import STREAM_PREFIX, Table, fold, table_from_created, table_id_of

BATCH = 2_000


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

    @property
    def open(self) -> bool:
        """A public table in the lobby with a free seat."""
        return (
            self.visibility == "public" and self.phase == "lobby" and self.seated < self.seat_count
        )


class TableDirectory:
    """Tables by id, folded from the store's global order."""

    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._tables: dict[str, Table] = {}
        self._position = Position.START
        self._guard = threading.Lock()

    def refresh(self) -> int:
        """Fold the events appended since the last refresh; returns how many."""
        with self._guard:
            folded = 0
            while True:
                batch = self._store.read_all(self._position, BATCH)
                for stored in batch:
                    self._fold(stored.stream_id, stored.type, stored.payload, stored.version)
                    self._position = stored.position
                folded += len(batch)
                if len(batch) < BATCH:
                    return folded

    def note(self, table: Table) -> None:
        """A table as this replica just left it: listed at once, before the global order shows it.

        On PostgreSQL the global order holds an event back while older
        transactions run; this keeps a replica's own changes in its list.
        """
        with self._guard:
            known = self._tables.get(table.table_id)
            if known is None or known.version < table.version:
                self._tables[table.table_id] = table

    def _fold(self, stream: str, type_name: str, payload: bytes, version: int) -> None:
        if not stream.startswith(STREAM_PREFIX):
            return
        table_id = table_id_of(stream)
        table = self._tables.get(table_id)
        if table is None:
            if type_name == codec.type_name(pb.TableCreated):
                created = pb.TableCreated.FromString(payload)
                self._tables[table_id] = table_from_created(created)
            return
        if version <= table.version:
            return
        self._tables[table_id] = fold(table, codec.decode(type_name, payload), version)

    def summaries(self, open_only: bool = False) -> list[Summary]:
        """Every known table (or only open ones), by id."""
        with self._guard:
            tables = list(self._tables.values())
        out = []
        for table in sorted(tables, key=lambda t: t.table_id):
            game = table.game
            summary = Summary(
                table_id=table.table_id,
                preset=game.options.preset,
                options=codec.options_to_map(game.options),
                seated=len(game.occupied),
                seat_count=len(game.seats),
                phase=game.phase,
                visibility=table.visibility,
            )
            if summary.open or not open_only:
                out.append(summary)
        return out
