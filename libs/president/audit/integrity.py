"""What a valid hash chain still leaves open in a stored event: hidden data and unhashed columns.

The chain hashes an event's payload bytes and metadata as they are, so an
insider could hide data in them and recompute the hashes: extra metadata
keys, or protobuf fields no reader knows. So every metadata key must be one
the table service writes (:data:`METADATA_KEYS`), and every payload must be
exactly the deterministic encoding of the message it holds (no unknown
fields, no other field order or encoding). The ``command_id`` and
``command_seq`` columns are not hashed: they must say what the hashed part
does (the command id of the metadata; each event's place in its command),
and one command's events share one transaction (``tx_id``) with row ids in
version order. Raises :class:`~president.audit.reports.Found` at the first
event that breaks one.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.message import Message

from president.audit.reports import Found
from president.store import StoredEvent
from president.store.columns import CommandColumns

METADATA_KEYS = frozenset({"actor", "command_id", "time"})
"""The metadata keys of a table's stored events: who, which command, when."""


def check_metadata(event: StoredEvent) -> None:
    """The event's metadata holds only :data:`METADATA_KEYS`, each a non-empty string."""
    metadata = event.metadata
    extra = metadata.keys() - METADATA_KEYS
    if extra:
        raise Found(
            event,
            f"its metadata holds keys no table service writes ({', '.join(sorted(extra))}): "
            "data hidden in the hashed log",
        )
    for key in METADATA_KEYS:
        value = metadata.get(key)
        if not isinstance(value, str) or not value:
            raise Found(event, f"its metadata has no {key}")


def check_canonical(event: StoredEvent, message: Message) -> None:
    """The payload is the deterministic encoding of ``message`` (parsed from it), no more.

    Drops ``message``'s unknown fields (the caller raises nothing else with it).
    """
    message.DiscardUnknownFields()
    if message.SerializeToString(deterministic=True) != event.payload:
        raise Found(
            event,
            "its payload is not the deterministic encoding of the event it holds: it carries "
            "fields no reader knows, or bytes encoded another way (data hidden in the hashed log)",
        )


def check_command_columns(
    events: Sequence[StoredEvent], columns: Sequence[CommandColumns] | None
) -> None:
    """The unhashed columns of every row agree with the hashed events (``columns``: None: unread).

    ``columns`` are the rows' ``(version, command_id, command_seq)``, in
    version order, as :func:`president.store.columns.read_command_columns`
    gives them.
    """
    previous: StoredEvent | None = None
    seq = 0
    by_version = {row.version: row for row in columns} if columns is not None else None
    for event in events:
        same_command = previous is not None and previous.metadata.get(
            "command_id"
        ) == event.metadata.get("command_id")
        seq = seq + 1 if same_command else 0
        if previous is not None:
            if same_command and event.position.transaction != previous.position.transaction:
                raise Found(
                    event,
                    f"its transaction id {event.position.transaction} differs from that of the "
                    f"event before it ({previous.position.transaction}), yet both are of one "
                    "command, which is appended in one transaction: the tx_id column was "
                    "rewritten",
                )
            if event.position.id <= previous.position.id:
                raise Found(
                    event,
                    f"its row id {event.position.id} is not after that of version "
                    f"{previous.version} ({previous.position.id}): the rows were rewritten "
                    "out of their append order",
                )
        previous = event
        if by_version is None:
            continue
        row = by_version.get(event.version)
        if row is None:  # pragma: no cover - read from the same table
            continue
        if row.command_id != event.metadata.get("command_id"):
            raise Found(
                event,
                f"its command_id column says {row.command_id!r}, but its hashed metadata says "
                f"{event.metadata.get('command_id')!r}: the column was rewritten",
            )
        if row.command_seq != seq:
            raise Found(
                event,
                f"its command_seq column says {row.command_seq}, but it is event {seq} of its "
                "command: the column was rewritten",
            )
