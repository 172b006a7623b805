"""The values the event store takes and gives back, and its errors."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

if TYPE_CHECKING:
    from google.protobuf.message import Message

JSON: TypeAlias = "bool | int | float | str | list[JSON] | dict[str, JSON] | None"
"""A value that canonical JSON can hold: what event metadata is made of."""

_POSITION_TEXT = re.compile(r"(\d+):(\d+)")


@dataclass(frozen=True, order=True)
class Position:
    """A place in the global order of all committed events.

    Treat it as opaque: compare positions, store them with ``str(position)``
    and read them back with ``Position.parse``. It is ``(transaction, id)``:
    on PostgreSQL the writing transaction's id and the row id, on SQLite
    ``0`` and the row id. Later events have greater positions; ``Position.START``
    comes before every event.
    """

    transaction: int
    id: int

    START: ClassVar[Position]

    def __str__(self) -> str:
        return f"{self.transaction}:{self.id}"

    @classmethod
    def parse(cls, text: str) -> Position:
        """The position that ``str(position)`` printed as ``text``."""
        match = _POSITION_TEXT.fullmatch(text.strip())
        if match is None:
            raise ValueError(f"{text!r} is not an event store position: expected '<int>:<int>'")
        return cls(int(match[1]), int(match[2]))


Position.START = Position(0, 0)


def canonical_json(value: Mapping[str, JSON]) -> str:
    """The one JSON text of ``value``: sorted keys, no spaces, UTF-8, no NaN.

    Written by the standard library's C encoder, made once (what ``json.dumps``
    makes anew on every call with these options): the same text, three times as
    fast (every append writes it, and every chain check writes it again). It
    keeps no record of the containers it is inside (metadata is never circular:
    a circular value is refused all the same, when the encoder runs too deep).
    """
    try:
        if _encode is not None:
            # A dict itself, not through ``default`` (a mapping ABC check per event).
            return "".join(_encode(value if type(value) is dict else dict(value), 0))
        return json.dumps(
            value,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
            default=_mapping_as_dict,
        )
    except (TypeError, ValueError, RecursionError) as error:
        raise ValueError(f"event metadata must be plain JSON: {error}") from None


def _mapping_as_dict(value: object) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


_encode = (
    c_make_encoder(None, _mapping_as_dict, encode_basestring, None, ":", ",", True, False, False)
    if c_make_encoder is not None
    else None
)
"""The C encoder of ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
allow_nan=False)``, with mappings as objects (None where the C encoder is missing)."""


def _frozen_metadata(metadata: Mapping[str, JSON]) -> Mapping[str, JSON]:
    """A read-only deep copy of ``metadata`` (also checks that it is plain JSON)."""
    copy: dict[str, JSON] = json.loads(canonical_json(metadata))
    return MappingProxyType(copy)


@dataclass(frozen=True)
class NewEvent:
    """An event to append: its type name, its serialised payload, and metadata.

    ``type`` names the payload's message, e.g. ``"president.events.v1.CardsPlayed"``.
    ``metadata`` is plain JSON; put the ``actor`` there. The store adds the
    ``command_id`` and the ``time`` of the append to it.
    """

    type: str
    payload: bytes
    metadata: Mapping[str, JSON] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.type or len(self.type) > 200:
            raise ValueError(f"an event type name has 1 to 200 characters, got {self.type!r}")
        if not isinstance(self.payload, bytes):
            raise TypeError(f"an event payload is bytes, got {type(self.payload).__name__}")
        object.__setattr__(self, "metadata", _frozen_metadata(self.metadata))

    @classmethod
    def from_message(cls, message: Message, metadata: Mapping[str, JSON] | None = None) -> NewEvent:
        """The event of a protobuf message: its full name as type, its deterministic bytes."""
        return cls(
            type=message.DESCRIPTOR.full_name,
            payload=message.SerializeToString(deterministic=True),
            metadata=metadata or {},
        )


@dataclass(frozen=True)
class StoredEvent:
    """An event as committed: where it is, what it holds, and its place in the hash chain.

    ``hash`` is the SHA-256 (hex) of the event's canonical bytes, which include
    ``previous_hash``, the hash of the stream's previous event (64 zeros for
    version 1). See ``president.store.chain``.
    """

    stream_id: str
    version: int
    type: str
    payload: bytes
    metadata: Mapping[str, JSON]
    position: Position
    hash: str
    previous_hash: str

    @property
    def command_id(self) -> str:
        """The id of the command whose append wrote this event."""
        return str(self.metadata["command_id"])

    @property
    def time(self) -> str:
        """The time of the append, an ISO 8601 string."""
        return str(self.metadata["time"])


@dataclass(frozen=True)
class AppendResult:
    """What an append wrote: the stream's new versions and the events' positions.

    A repeated command gets the result of its first append, without its events.
    """

    stream_id: str
    first_version: int
    last_version: int
    positions: tuple[Position, ...]
    #: The events as committed, when this append wrote them (empty for a repeat):
    #: what a relay can publish at once without reading them back.
    events: tuple[StoredEvent, ...] = field(default=(), compare=False, repr=False)

    @property
    def versions(self) -> range:
        """The versions the append wrote, first to last."""
        return range(self.first_version, self.last_version + 1)


class StoreError(Exception):
    """Base class of the event store's errors."""


class ConcurrencyConflict(StoreError):
    """The stream was not at the expected version; the append wrote nothing."""

    def __init__(self, stream_id: str, expected_version: int, actual_version: int) -> None:
        super().__init__(
            f"stream {stream_id!r} is at version {actual_version}, not at the expected "
            f"version {expected_version}: nothing was appended; reload the stream and retry"
        )
        self.stream_id = stream_id
        self.expected_version = expected_version
        self.actual_version = actual_version


class CommandIdReused(StoreError):
    """A command id that already wrote to another stream came back for this one."""

    def __init__(self, command_id: str, stream_id: str, first_stream_id: str) -> None:
        super().__init__(
            f"command id {command_id!r} was already appended to stream {first_stream_id!r}; "
            f"it cannot also append to {stream_id!r}: give every command a fresh id"
        )
        self.command_id = command_id
        self.stream_id = stream_id
        self.first_stream_id = first_stream_id


class SchemaNotReady(StoreError):
    """The database's schema is missing or not at the newest migration."""


def json_object(text: str) -> dict[str, Any]:
    """Parse stored metadata JSON (always an object)."""
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"stored event metadata is not a JSON object: {text[:80]!r}")
    return value
