"""The public commitment feed on NATS JetStream: its stream, one entry's publish, the reading.

The feed's entries (:mod:`president.store.commitments`) travel in a JetStream
stream of their own, apart from the table events: one message per entry, the
``CommitmentEntry`` protobuf, on the subject ``<prefix>.<day>`` (the entry's
UTC day, so an archiver may take one day), kept for ever. The stream's own
sequence is the feed's: entry ``n`` is message ``n``. Each is published with
``Nats-Expected-Last-Sequence: n - 1`` and ``Nats-Msg-Id: commitment:<n>``,
so JetStream stores it only right after entry ``n - 1`` and only once: a
publisher that restarts asks the stream where it is (:func:`published_through`)
and goes on from the next entry, and two publishers never store an entry twice
or out of order (:mod:`president.services.table.feed_relay`). Anyone who may
read the stream reads the entries back in order (:func:`read_entries`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from nats.js import JetStreamContext
from nats.js.errors import APIError, NotFoundError

from president.events.v1 import events_pb2 as pb
from president.hosting.signatures import Signer
from president.servicekit.nats import Subjects, put_stream
from president.store.commitments import Commitment, FeedEntry

WRONG_LAST_SEQUENCE = 10071
"""JetStream's error code for a publish whose expected last sequence is not the stream's."""


@dataclass(frozen=True)
class FeedSubjects:
    """Where the feed travels: the subjects ``<prefix>.<day>`` of one JetStream stream."""

    stream: str
    prefix: str
    #: Copies of the stream in a NATS cluster.
    replicas: int = 1

    @classmethod
    def beside(cls, events: Subjects) -> FeedSubjects:
        """The feed of the table events' stream: named after it (``<stream>_COMMITMENTS``,
        ``<prefix>-commitments``), so every stack of events has its own feed."""
        return cls(f"{events.stream}_COMMITMENTS", f"{events.prefix}-commitments", events.replicas)

    @property
    def all_days(self) -> str:
        return f"{self.prefix}.>"

    def day(self, day: str) -> str:
        """The subject of one UTC day's entries."""
        return f"{self.prefix}.{day}"


class FeedStreamError(Exception):
    """The feed's stream cannot be read as the feed: a sentence saying why."""


async def ensure_feed_stream(js: JetStreamContext, subjects: FeedSubjects) -> None:
    """Create the feed's stream if it is missing (file storage, no age limit)."""
    await put_stream(js, subjects.stream, subjects.all_days, subjects.replicas, 0)


async def published_through(js: JetStreamContext, subjects: FeedSubjects) -> int:
    """The last entry the stream holds (0: none yet)."""
    info = await js.stream_info(subjects.stream)
    return int(info.state.last_seq)


def entry_message(entry: FeedEntry, signer: Signer | None = None) -> pb.CommitmentEntry:
    """A feed entry as the wire carries it, its head signed by ``signer``."""
    c = entry.commitment
    message = pb.CommitmentEntry(
        seq=entry.seq,
        day=c.day,
        stream_id=c.stream_id,
        version=c.version,
        game_no=c.game_no,
        round_no=c.round_no,
        fingerprint=c.fingerprint,
        committed_at=c.committed_at,
        hash=entry.hash,
        previous_hash=entry.previous_hash,
    )
    if signer is not None:
        signed = signer.sign_feed_head(entry.seq, entry.hash)
        message.signature, message.key_id = signed.signature, signed.key_id
    return message


def entry_from_message(message: pb.CommitmentEntry) -> FeedEntry:
    """The feed entry a wire message carries."""
    return FeedEntry(
        seq=message.seq,
        commitment=Commitment(
            stream_id=message.stream_id,
            version=message.version,
            game_no=message.game_no,
            round_no=message.round_no,
            fingerprint=message.fingerprint,
            committed_at=message.committed_at,
        ),
        hash=message.hash,
        previous_hash=message.previous_hash,
        signature=message.signature.hex(),
        key_id=message.key_id,
    )


async def publish_entry(
    js: JetStreamContext, subjects: FeedSubjects, entry: FeedEntry, signer: Signer | None = None
) -> bool:
    """Store ``entry`` right after entry ``seq - 1``: True when this call stored it, False when
    the stream holds it already or is elsewhere (another publisher moved it: ask it again)."""
    try:
        ack = await js.publish(
            subjects.day(entry.commitment.day),
            entry_message(entry, signer).SerializeToString(deterministic=True),
            headers={
                "Nats-Msg-Id": f"commitment:{entry.seq}",
                "Nats-Expected-Last-Sequence": str(entry.seq - 1),
            },
        )
    except APIError as error:
        if error.err_code == WRONG_LAST_SEQUENCE:
            return False
        raise
    return not ack.duplicate and int(ack.seq) == entry.seq


async def read_entries(
    js: JetStreamContext, subjects: FeedSubjects, after_seq: int = 0
) -> AsyncIterator[FeedEntry]:
    """The entries the stream holds after ``after_seq``, in order; FeedStreamError for a
    message that is missing or no entry at its place."""
    try:
        last = await published_through(js, subjects)
    except NotFoundError:
        raise FeedStreamError(f"NATS has no commitment feed stream {subjects.stream!r}") from None
    for seq in range(after_seq + 1, last + 1):
        try:
            raw = await js.get_msg(subjects.stream, seq)
        except NotFoundError:
            raise FeedStreamError(
                f"message {seq} of the feed stream {subjects.stream!r} is gone: an entry was "
                "deleted from the public feed"
            ) from None
        message = pb.CommitmentEntry.FromString(raw.data or b"")
        if message.seq != seq:
            raise FeedStreamError(
                f"message {seq} of the feed stream {subjects.stream!r} holds entry "
                f"{message.seq}: the stream is not the feed"
            )
        yield entry_from_message(message)
