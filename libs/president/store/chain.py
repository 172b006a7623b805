"""The per-stream hash chain: tamper evidence for every stored event.

Each event's hash is ``SHA-256(canonical_bytes)`` in lowercase hex, where the
canonical bytes are the tag ``president-event-v1`` followed by six fields,
each as an 8-byte big-endian length and then its bytes:

1. the stream id, UTF-8;
2. the version, decimal ASCII;
3. the type name, UTF-8;
4. the payload bytes;
5. the metadata as canonical JSON (sorted keys, no spaces, UTF-8);
6. the previous event's hash, hex ASCII (``GENESIS_HASH`` for version 1).

So changing any event changes its hash, and removing, inserting or
reordering events breaks the link from one event to the next. Cutting events
off the end of a stream leaves a valid shorter chain: to notice that, compare
the last hash with one kept elsewhere (every published event carries it).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Mapping

from president.store.records import JSON, StoredEvent, canonical_json

GENESIS_HASH = "0" * 64
"""The ``previous_hash`` of every stream's first event."""

_TAG = b"president-event-v1"


def canonical_bytes(
    stream_id: str,
    version: int,
    type: str,
    payload: bytes,
    metadata: Mapping[str, JSON],
    previous_hash: str,
) -> bytes:
    """The bytes an event's hash is taken over (see the module documentation)."""
    return _canonical_bytes(
        stream_id, version, type, payload, canonical_json(metadata), previous_hash
    )


def _canonical_bytes(
    stream_id: str,
    version: int,
    type: str,
    payload: bytes,
    metadata_json: str,
    previous_hash: str,
) -> bytes:
    stream = stream_id.encode()
    number = str(version).encode("ascii")
    kind = type.encode()
    metadata = metadata_json.encode()
    previous = previous_hash.encode("ascii")
    return b"".join(
        (
            _TAG,
            _length(len(stream)),
            stream,
            _length(len(number)),
            number,
            _length(len(kind)),
            kind,
            _length(len(payload)),
            payload,
            _length(len(metadata)),
            metadata,
            _length(len(previous)),
            previous,
        )
    )


_length = struct.Struct(">Q").pack
"""A field's length as 8 bytes, big-endian."""


def hash_canonical(
    stream_id: str,
    version: int,
    type: str,
    payload: bytes,
    metadata_json: str,
    previous_hash: str,
) -> str:
    """``event_hash`` for metadata already written as canonical JSON text."""
    data = _canonical_bytes(stream_id, version, type, payload, metadata_json, previous_hash)
    return hashlib.sha256(data).hexdigest()


def event_hash(
    stream_id: str,
    version: int,
    type: str,
    payload: bytes,
    metadata: Mapping[str, JSON],
    previous_hash: str,
) -> str:
    """The SHA-256, lowercase hex, of an event's canonical bytes."""
    data = canonical_bytes(stream_id, version, type, payload, metadata, previous_hash)
    return hashlib.sha256(data).hexdigest()


class ChainError(Exception):
    """The first event of a stream where the hash chain does not hold.

    ``verify_chain`` returns it (raise it if you like). ``index`` is the
    event's place in the sequence given to ``verify_chain``.
    """

    def __init__(self, stream_id: str, version: int, index: int, reason: str) -> None:
        super().__init__(f"stream {stream_id!r}, event version {version} (item {index}): {reason}")
        self.stream_id = stream_id
        self.version = version
        self.index = index
        self.reason = reason


def verify_chain(events: Iterable[StoredEvent]) -> ChainError | None:
    """Check a stream's events, in order, against their hash chain.

    Returns ``None`` when every event's hash matches its content and links to
    the event before it, or a ``ChainError`` naming the first event where the
    chain breaks: its content was changed, an event before it was removed or
    inserted, or the events are out of order. A sequence starting at version 1
    must start from ``GENESIS_HASH``; one starting later trusts its first
    event's ``previous_hash``.
    """
    previous: StoredEvent | None = None
    sha256 = hashlib.sha256
    for index, event in enumerate(events):
        if previous is None:
            if event.version == 1 and event.previous_hash != GENESIS_HASH:
                return _error(
                    event, index, "the first event of a stream must link to the genesis hash"
                )
        else:
            if event.stream_id != previous.stream_id:
                return _error(
                    event, index, f"belongs to another stream than {previous.stream_id!r}"
                )
            if event.version != previous.version + 1:
                return _error(
                    event,
                    index,
                    f"follows version {previous.version}: an event is missing, inserted "
                    "or out of order",
                )
            if event.previous_hash != previous.hash:
                return _error(
                    event,
                    index,
                    f"its previous hash does not match the hash of version {previous.version}: "
                    "an event before it was replaced, removed or reordered",
                )
        data = _canonical_bytes(
            event.stream_id,
            event.version,
            event.type,
            event.payload,
            canonical_json(event.metadata),
            event.previous_hash,
        )
        if event.hash != sha256(data).hexdigest():
            return _error(
                event, index, "its hash does not match its content: the event was changed"
            )
        previous = event
    return None


def _error(event: StoredEvent, index: int, reason: str) -> ChainError:
    return ChainError(event.stream_id, event.version, index, reason)
