"""A retried command is the same command: a digest of each command, kept with its events.

The store makes a command id idempotent: an append of an id that wrote
before writes nothing and returns the first result. A client that sends the
same id again with other content (other cards, another seat, another actor)
is not retrying: it is refused as a conflicting retry (``CommandConflict``,
COMMAND_ID_REUSED), never answered with the first command's result. The
digest rides in each event's metadata (``digest``); events stored before it
existed carry none and are not compared.
"""

from __future__ import annotations

import hashlib

from president.hosting.errors import CommandConflict
from president.store import AppendResult, EventStore

#: The metadata key of a command's digest.
DIGEST = "digest"


def command_digest(command: object, actor: str) -> str:
    """A short digest of what a command asks and who asks it (commands are plain values)."""
    return hashlib.sha256(f"{actor}\n{command!r}".encode()).hexdigest()[:24]


def check_same(store: EventStore, earlier: AppendResult, command_id: str, digest: str) -> None:
    """CommandConflict unless the earlier append of ``command_id`` was this very command."""
    first = store.read_stream(earlier.stream_id, earlier.first_version, 1)
    kept = first[0].metadata.get(DIGEST) if first else None
    if kept is not None and kept != digest:
        raise CommandConflict(command_id)
