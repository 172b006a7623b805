"""NATS JetStream: the events stream, subjects per table, publishing with de-duplication."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError

from president.events.v1 import events_pb2 as pb
from president.hosting.signatures import Signer
from president.hosting.streams import table_id_of

if TYPE_CHECKING:  # the stored events' type only: a service without a store needs no SQLAlchemy
    from president.store import StoredEvent

DEFAULT_PREFIX = "events.table"
DUPLICATE_WINDOW_SECONDS = 600.0
DEFAULT_MAX_AGE_SECONDS = 7 * 24 * 3600.0
_TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def valid_table_id(table_id: str) -> bool:
    """Whether ``table_id`` can name a stream and a subject."""
    return bool(_TABLE_ID.fullmatch(table_id))


@dataclass(frozen=True)
class Subjects:
    """Where table events travel: ``<prefix>.<table_id>``, in one JetStream stream."""

    prefix: str = DEFAULT_PREFIX
    stream: str = "PRESIDENT_EVENTS"
    #: Copies of the stream in a NATS cluster (1 on a single server; 3 in the k8s manifests).
    replicas: int = 1
    #: How long JetStream keeps an event (0: for ever). The event store keeps it
    #: for ever; a follower that finds older events gone fills the gap from the
    #: table service, and a restarted timer replays only this much.
    max_age_seconds: float = DEFAULT_MAX_AGE_SECONDS

    def __post_init__(self) -> None:
        if self.max_age_seconds and self.max_age_seconds < DUPLICATE_WINDOW_SECONDS:
            raise ValueError(
                f"the events stream keeps events at least {DUPLICATE_WINDOW_SECONDS:.0f} s "
                f"(its de-duplication window), or for ever (0), not {self.max_age_seconds:g} s"
            )

    @property
    def all_tables(self) -> str:
        """The wildcard of every table's subject."""
        return f"{self.prefix}.>"

    def table(self, table_id: str) -> str:
        """The subject of a table's events."""
        return f"{self.prefix}.{table_id}"


#: How much of an event's hash its ``Nats-Msg-Id`` carries (hex digits: 64 bits).
ID_HASH_DIGITS = 16


def message_id(stream_id: str, version: int, event_hash: str) -> str:
    """The ``Nats-Msg-Id`` of a stored event, ``<stream>:<version>:<hash>``: JetStream drops
    the same event published again, and consumers de-duplicate on its version.

    The hash is in it because a version is not an event: a database that
    failed over to a standby that lacked its last commits gives those
    versions to new events, and JetStream must take them, not drop them as
    the lost events' duplicates (the followers then see the history rewound).
    """
    return f"{stream_id}:{version}:{event_hash[:ID_HASH_DIGITS]}"


def _id_parts(headers: dict[str, str] | None) -> tuple[int, str] | None:
    if not headers:
        return None
    parts = headers.get("Nats-Msg-Id", "").rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit():
        return int(parts[1]), parts[2]
    if len(parts) >= 2 and parts[-1].isdigit():  # ``<stream>:<version>``, as before
        return int(parts[-1]), ""
    return None


def version_in(headers: dict[str, str] | None) -> int | None:
    """The event version a message's ``Nats-Msg-Id`` names (None without a readable one)."""
    parts = _id_parts(headers)
    return parts[0] if parts is not None else None


def hash_in(headers: dict[str, str] | None) -> str:
    """The start of the event's hash a message's ``Nats-Msg-Id`` carries ("" if none)."""
    parts = _id_parts(headers)
    return parts[1] if parts is not None else ""


def envelope(stored: StoredEvent, signer: Signer | None = None) -> pb.EventEnvelope:
    """The message that carries a stored event on NATS, its receipt signed by ``signer``."""
    message = pb.EventEnvelope(
        stream_id=stored.stream_id,
        version=stored.version,
        type=stored.type,
        payload=stored.payload,
        command_id=str(stored.metadata.get("command_id", "")),
        time=str(stored.metadata.get("time", "")),
        actor=str(stored.metadata.get("actor", "")),
        hash=stored.hash,
        previous_hash=stored.previous_hash,
    )
    if signer is not None:
        signed = signer.sign_receipt(stored.stream_id, stored.version, stored.hash)
        message.signature, message.key_id = signed.signature, signed.key_id
    return message


def servers(url: str) -> list[str]:
    """The NATS servers of ``PRESIDENT_NATS_URL``: one URL, or a cluster's, comma-separated
    (``nats://a:4222,nats://b:4222``), so a service starts while any one of them answers."""
    listed = [part.strip() for part in url.split(",") if part.strip()]
    return listed or [url]


async def connect(url: str, name: str) -> tuple[Client, JetStreamContext]:
    """Connect to NATS (any server of ``url``'s list) and get a JetStream context."""
    client = await nats.connect(
        servers(url),
        name=name,
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.5,
        connect_timeout=5,
    )
    return client, client.jetstream()


async def ensure_stream(js: JetStreamContext, subjects: Subjects) -> None:
    """Create the events stream if it is missing (file storage, de-duplication window,
    events kept ``max_age_seconds``).

    An existing stream is updated to this configuration, its number of
    replicas and its age limit included (a NATS cluster moves the copies).
    """
    await put_stream(
        js, subjects.stream, subjects.all_tables, subjects.replicas, subjects.max_age_seconds
    )


async def put_stream(
    js: JetStreamContext, name: str, subjects: str, replicas: int, max_age_seconds: float
) -> None:
    """Create the stream ``name`` of ``subjects`` (file storage, the de-duplication window,
    messages kept ``max_age_seconds``, 0: for ever), or update it to that if it is there."""
    config = StreamConfig(
        name=name,
        subjects=[subjects],
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        duplicate_window=DUPLICATE_WINDOW_SECONDS,
        num_replicas=replicas,
        max_age=max_age_seconds,
    )
    try:
        await js.add_stream(config)
    except BadRequestError:
        await js.update_stream(config)


async def publish(
    js: JetStreamContext,
    subjects: Subjects,
    stored: StoredEvent,
    timeout: float | None = None,
    signer: Signer | None = None,
) -> None:
    """Publish a stored event to its table's subject, de-duplicated by stream and version.

    Waits for JetStream's acknowledgement (at most ``timeout`` seconds; None:
    the context's default), raising if none comes.
    """
    table_id = table_id_of(stored.stream_id)
    await js.publish(
        subjects.table(table_id),
        envelope(stored, signer).SerializeToString(deterministic=True),
        timeout=timeout,
        headers={"Nats-Msg-Id": message_id(stored.stream_id, stored.version, stored.hash)},
    )


async def publish_all(
    js: JetStreamContext,
    subjects: Subjects,
    events: Sequence[StoredEvent],
    timeout: float,
    signer: Signer | None = None,
) -> list[bool]:
    """Publish stored events in order without waiting for each acknowledgement.

    The messages go out back to back on the connection, and JetStream stores
    them in that order; then the acknowledgements are awaited together, for
    at most ``timeout`` seconds. Returns, per event, whether it was
    acknowledged (an unacknowledged one may still have been stored: publish
    it again, its ``Nats-Msg-Id`` keeps it single).
    """
    if not events:
        return []
    pending = []
    for stored in events:
        pending.append(
            await js.publish_async(
                subjects.table(table_id_of(stored.stream_id)),
                envelope(stored, signer).SerializeToString(deterministic=True),
                headers={"Nats-Msg-Id": message_id(stored.stream_id, stored.version, stored.hash)},
            )
        )
    done, late = await asyncio.wait(pending, timeout=timeout)
    for future in late:
        future.cancel()
    return [future in done and future.exception() is None for future in pending]


async def close_all(clients: list[Client]) -> None:
    """Close every NATS connection in ``clients`` (emptying the list), ignoring failures."""
    while clients:
        client = clients.pop()
        with contextlib.suppress(Exception):
            await client.close()
