"""What a valid hash chain still leaves open in a stored event: hidden data and unhashed columns.

The chain hashes an event's payload bytes and metadata as they are, so an
insider could hide data in them and recompute the hashes: extra metadata
keys, or protobuf fields no reader knows. So every metadata key must be one
the table service writes (:data:`METADATA_KEYS`, and the blinding value of
:mod:`president.hosting.blinding`: on every event of a stream from the first
that has one; a log written before blinding values has none, and is only
warned about), and every payload must be
exactly the deterministic encoding of the message it holds (no unknown
fields, no other field order or encoding). The ``command_id`` and
``command_seq`` columns are not hashed: they must say what the hashed part
does (the command id of the metadata; each event's place in its command),
and one command's events share one transaction (``tx_id``) with row ids in
version order. Raises :class:`~president.audit.reports.Found` at the first
event that breaks one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import groupby

from google.protobuf.message import Message

from president.audit.reports import Found
from president.hosting.blinding import BLIND, BLIND_FORM
from president.store import StoredEvent
from president.store.columns import CommandColumns

METADATA_KEYS = frozenset({"actor", "command_id", "time"})
"""The metadata keys every stored event of a table has: who, which command, when."""
DIGEST_KEY = "digest"
"""The one optional key: a command's digest (:mod:`president.hosting.retries`), so that a
retry with other content is refused; 24 lowercase hex digits, nothing else (that it is the
command's own is :mod:`president.audit.digests`)."""
_DIGEST = re.compile(r"[0-9a-f]{24}")
BLINDED_KEYS = METADATA_KEYS | {BLIND}
"""The metadata keys of an event with its blinding value (every event the table service
writes now)."""


def unblinded_prefix(events: Sequence[StoredEvent]) -> int:
    """How many events at the start of a stream have no blinding value (written before
    blinding values existed): from the first that has one, every event must."""
    for index, event in enumerate(events):
        if BLIND in event.metadata:
            return index
    return len(events)


def metadata_clean(events: Sequence[StoredEvent], unblinded: int) -> bool:
    """Every event's metadata has exactly its keys, blinding values and digests well formed
    (the honest case at list speed; False: look event by event with :func:`check_metadata`)."""
    blind_form, digest_form = BLIND_FORM.fullmatch, _DIGEST.fullmatch
    plain, digested = BLINDED_KEYS, BLINDED_KEYS | {DIGEST_KEY}
    for event in events[unblinded:]:
        metadata = event.metadata
        keys = metadata.keys()
        if keys == digested:
            digest = metadata[DIGEST_KEY]
            if type(digest) is not str or not digest_form(digest):
                return False
        elif keys != plain:
            return False
        blind = metadata[BLIND]
        if type(blind) is not str or not blind_form(blind):
            return False
    return all(event.metadata.keys() == METADATA_KEYS for event in events[:unblinded])


def unblinded_warning(events: Sequence[StoredEvent], unblinded: int) -> str | None:
    """The warning about a log's events written before blinding values (None: there are
    none)."""
    if not unblinded:
        return None
    first, last = events[0].version, events[unblinded - 1].version
    return (
        f"versions {first}-{last} carry no blinding value (written "
        "before blinding values): a seat that received them could test guesses of the cards "
        "hidden from it against their hashes"
    )


def check_metadata(event: StoredEvent, blinded: bool = True) -> None:
    """The event's metadata holds :data:`METADATA_KEYS`, its well-formed blinding value when
    ``blinded`` (none otherwise), perhaps a well-formed digest, and no other key."""
    metadata = event.metadata
    digest = metadata.get(DIGEST_KEY)
    if digest is not None and not (isinstance(digest, str) and _DIGEST.fullmatch(digest)):
        raise Found(event, "its command digest is not 24 hex digits: data hidden in the hashed log")
    blind = metadata.get(BLIND)
    if blinded and blind is None:
        raise Found(
            event,
            "its metadata has no blinding value, yet an earlier event of the log has one: "
            "from the first, every event carries one",
        )
    if blind is not None and not (isinstance(blind, str) and BLIND_FORM.fullmatch(blind)):
        raise Found(event, "its blinding value is not 32 hex digits: data hidden in the hashed log")
    keys = metadata.keys() - {DIGEST_KEY, BLIND}
    if keys == METADATA_KEYS:
        return
    extra = keys - METADATA_KEYS
    if extra:
        raise Found(
            event,
            f"its metadata holds keys no table service writes ({', '.join(sorted(extra))}): "
            "data hidden in the hashed log",
        )
    missing = ", ".join(sorted(METADATA_KEYS - keys))
    raise Found(event, f"its metadata has no {missing}")


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
    if _columns_agree(events, columns):
        return
    previous: StoredEvent | None = None
    previous_command: object = None
    seq = 0
    rows: Sequence[CommandColumns | None]
    if columns is None:
        rows = [None] * len(events)
    elif len(columns) == len(events) and all(
        row.version == event.version for row, event in zip(columns, events, strict=True)
    ):
        rows = columns
    else:  # pragma: no cover - read in one query, in version order
        by_version = {row.version: row for row in columns}
        rows = [by_version.get(event.version) for event in events]
    for event, row in zip(events, rows, strict=True):
        command_id = event.metadata.get("command_id")
        same_command = previous is not None and previous_command == command_id
        seq = seq + 1 if same_command else 0
        if previous is not None:
            position, before = event.position, previous.position
            if same_command and position.transaction != before.transaction:
                raise Found(
                    event,
                    f"its transaction id {position.transaction} differs from that of the "
                    f"event before it ({before.transaction}), yet both are of one "
                    "command, which is appended in one transaction: the tx_id column was "
                    "rewritten",
                )
            if position.id <= before.id:
                raise Found(
                    event,
                    f"its row id {position.id} is not after that of version "
                    f"{previous.version} ({before.id}): the rows were rewritten "
                    "out of their append order",
                )
        previous, previous_command = event, command_id
        if row is None:
            continue
        if row.command_id != command_id:
            raise Found(
                event,
                f"its command_id column says {row.command_id!r}, but its hashed metadata says "
                f"{command_id!r}: the column was rewritten",
            )
        if row.command_seq != seq:
            raise Found(
                event,
                f"its command_seq column says {row.command_seq}, but it is event {seq} of its "
                "command: the column was rewritten",
            )


def _columns_agree(events: Sequence[StoredEvent], columns: Sequence[CommandColumns] | None) -> bool:
    """The honest case at list speed: every column agrees (False: look event by event)."""
    command_ids = [event.metadata.get("command_id") for event in events]
    positions = [event.position for event in events]
    ids = [position.id for position in positions]
    if ids != sorted(ids) or len(set(ids)) != len(ids):
        return False
    transactions = [position.transaction for position in positions]
    if any(transactions):  # PostgreSQL: one transaction per command
        for index in range(1, len(events)):
            if (
                command_ids[index] == command_ids[index - 1]
                and transactions[index] != transactions[index - 1]
            ):
                return False
    if columns is None:
        return True
    if [row.version for row in columns] != [event.version for event in events]:
        return False
    if [row.command_id for row in columns] != command_ids:
        return False
    expected = [len(list(run)) for _, run in groupby(command_ids)]
    seqs = [row.command_seq for row in columns]
    return seqs == [seq for length in expected for seq in range(length)]
