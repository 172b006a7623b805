"""Level 1 of the store: streams, with optimistic concurrency, idempotent appends, a hash chain.

One stream per aggregate (``"table-<id>"``), versions 1, 2, 3… per stream.
An append names the version the stream is at and a command id: the first
makes concurrent writers conflict instead of overwriting each other, the
second makes a retried command take effect once. Each event's hash links to
the one before it (``president.store.chain``). An append right after a
stream head this store knows takes the fast path (``president.store.fast_append``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from sqlalchemy import Engine, bindparam, func, insert, select
from sqlalchemy.exc import IntegrityError

from president.store.chain import GENESIS_HASH, hash_canonical
from president.store.fast_append import ONE_STATEMENT_ROWS, KnownHeads, insert_statement
from president.store.recorder import EVENT_COLUMNS, Recorder, check_id, stored_event
from president.store.records import (
    JSON,
    AppendResult,
    CommandIdReused,
    ConcurrencyConflict,
    NewEvent,
    Position,
    StoredEvent,
    canonical_json,
    json_object,
)
from president.store.schema import events as events_table

_STREAM_HEAD = (
    select(events_table.c.version, events_table.c.hash)
    .where(events_table.c.stream_id == bindparam("stream_id"))
    .order_by(events_table.c.version.desc())
    .limit(1)
)
_INSERT_EVENTS = insert(events_table).returning(
    events_table.c.tx_id, events_table.c.id, sort_by_parameter_order=True
)


class _StaleVersion(Exception):
    def __init__(self, actual: int) -> None:
        self.actual = actual


class StreamRecorder(Recorder):
    """Appends to streams and reads them back."""

    def __init__(self, engine: Engine, autocommit_engine: Engine | None = None) -> None:
        super().__init__(engine, autocommit_engine)
        self._known_heads = KnownHeads()
        self._insert_dialect = self._backend.insert_dialect
        self._insert_committed = self._backend.insert_committed

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
        check_id("stream id", stream_id)
        check_id("command id", command_id)
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
        inserted: list[tuple[int, int]] = []
        try:
            if (
                known is not None
                and known[0] == expected_version
                and len(events) <= ONE_STATEMENT_ROWS
            ):
                # The event at expected_version was stored with this hash: insert right
                # after it; if another append got there first, the unique (stream_id,
                # version) index refuses the rows. If that event is gone (a failover
                # lost it), nothing is inserted, and the head is read below.
                rows = rows_after(known[1])
                returned = self._insert_committed(insert_statement(self._insert_dialect, rows))
                inserted = [(int(tx_id), int(row_id)) for _, tx_id, row_id in returned]
                if not inserted:
                    self._known_heads.pop(stream_id, None)
            if not inserted:
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
            earlier = self.command_result(command_id, stream_id)
            if earlier is not None:
                return earlier
            raise ConcurrencyConflict(stream_id, expected_version, stale.actual) from None
        except IntegrityError:
            # Another append took these versions, or this command id, first.
            earlier = self.command_result(command_id, stream_id)
            if earlier is not None:
                return earlier
            actual = self.current_version(stream_id)
            raise ConcurrencyConflict(stream_id, expected_version, actual) from None
        self._known_heads.remember(stream_id, rows[-1]["version"], rows[-1]["hash"])
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

    def command_result(self, command_id: str, stream_id: str) -> AppendResult | None:
        """What the append of ``command_id`` wrote to ``stream_id``, or None if it never ran.

        Lets a service answer a retried command with its first result before
        deciding it again. Raises ``CommandIdReused`` if the id wrote to another stream.
        """
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
            select(*EVENT_COLUMNS)
            .where(events_table.c.stream_id == stream_id, events_table.c.version >= from_version)
            .order_by(events_table.c.version)
        )
        if limit is not None:
            query = query.limit(limit)
        with self._reading() as connection:
            stored = [stored_event(row) for row in connection.execute(query)]
        if stored:
            self._known_heads.remember(stream_id, stored[-1].version, stored[-1].hash)
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
        query = select(*EVENT_COLUMNS).where(
            events_table.c.stream_id == stream_id, events_table.c.type.in_(list(types))
        )
        if before_version is not None:
            query = query.where(events_table.c.version < before_version)
        query = query.order_by(events_table.c.version.desc()).limit(limit)
        with self._reading() as connection:
            return [stored_event(row) for row in connection.execute(query)]


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
