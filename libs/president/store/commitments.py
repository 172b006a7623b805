"""The public commitment feed: each round's deal fingerprint, in a hash chain of its own.

Outside every table's log, in its own table (``commitment_feed``, migration
``0006_commitments``): one entry per ``DealCommitted`` event, in the order
they were published, each naming the table's stream, the event's version,
the round and its fingerprint, the commit time and its UTC day. Each entry's
hash is ``SHA-256`` of the tag ``president-commitment-v1`` and its fields
(each an 8-byte big-endian length and its UTF-8 bytes: seq, day, stream id,
version, game, round, fingerprint, commit time, previous hash), and links to
the entry before it (``GENESIS_HASH`` for the first), so a day's entries
begin with the hash the day before ended on. Anyone who archived the feed
(or one day of it) can tell a replaced, removed or inserted entry; an
auditor compares the feed with the tables' logs
(:mod:`president.audit.commitments`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Engine,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
    insert,
    select,
)

from president.store.chain import GENESIS_HASH

_TAG = b"president-commitment-v1"

metadata = MetaData()
commitment_feed = Table(
    "commitment_feed",
    metadata,
    Column("seq", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True),
    Column("day", String(10), nullable=False),
    Column("stream_id", String(200), nullable=False),
    Column("version", Integer, nullable=False),
    Column("game_no", Integer, nullable=False),
    Column("round_no", Integer, nullable=False),
    Column("fingerprint", String(64), nullable=False),
    Column("committed_at", String(40), nullable=False),
    Column("hash", String(64), nullable=False),
    Column("previous_hash", String(64), nullable=False),
    UniqueConstraint("stream_id", "version", name="uq_commitment_feed_event"),
    Index("ix_commitment_feed_day", "day", "seq"),
)


@dataclass(frozen=True)
class Commitment:
    """A round's commitment as the feed publishes it (before its place in the chain)."""

    stream_id: str
    version: int
    game_no: int
    round_no: int
    fingerprint: str
    committed_at: str
    """The ``DealCommitted`` event's commit time, ISO 8601 (its first 10 characters: the day)."""

    @property
    def day(self) -> str:
        return self.committed_at[:10]


@dataclass(frozen=True)
class FeedEntry:
    """One entry of the feed: a commitment, its place and its hashes."""

    seq: int
    commitment: Commitment
    hash: str
    previous_hash: str
    signature: str = field(default="", compare=False)
    """The operator's signature of this head (hex; the stream's copy only, never the store's):
    an attestation of the entry, not part of it, so entries compare without it."""
    key_id: str = field(default="", compare=False)
    """The id of the key that signed it."""

    def to_json(self) -> dict[str, object]:
        c = self.commitment
        signed = {"signature": self.signature, "key_id": self.key_id} if self.signature else {}
        return signed | {
            "seq": self.seq,
            "day": c.day,
            "stream_id": c.stream_id,
            "version": c.version,
            "game_no": c.game_no,
            "round_no": c.round_no,
            "fingerprint": c.fingerprint,
            "committed_at": c.committed_at,
            "hash": self.hash,
            "previous_hash": self.previous_hash,
        }


def entry_hash(seq: int, commitment: Commitment, previous_hash: str) -> str:
    """The hash of an entry (see the module documentation)."""
    c = commitment
    fields = (
        str(seq),
        c.day,
        c.stream_id,
        str(c.version),
        str(c.game_no),
        str(c.round_no),
        c.fingerprint,
        c.committed_at,
        previous_hash,
    )
    data = _TAG + b"".join(
        len(part).to_bytes(8, "big") + part for part in (field.encode() for field in fields)
    )
    return hashlib.sha256(data).hexdigest()


def append_commitments(
    connection: Connection, commitments: Iterable[Commitment]
) -> list[FeedEntry]:
    """Append to the feed in ``connection``'s transaction (the caller's, with its tracking).

    A commitment of an event already published is skipped: the first
    publication stands (rows rewritten in the events table come back to a
    follower as new events, with the positions of their new rows).
    """
    wanted = list(commitments)
    if not wanted:
        return []
    streams = {c.stream_id for c in wanted}
    published = {
        (str(row.stream_id), int(row.version))
        for row in connection.execute(
            select(commitment_feed.c.stream_id, commitment_feed.c.version).where(
                commitment_feed.c.stream_id.in_(streams)
            )
        )
    }
    last = connection.execute(
        select(commitment_feed.c.seq, commitment_feed.c.hash)
        .order_by(commitment_feed.c.seq.desc())
        .limit(1)
    ).first()
    seq, previous = (int(last.seq), str(last.hash)) if last is not None else (0, GENESIS_HASH)
    entries: list[FeedEntry] = []
    for commitment in wanted:
        if (commitment.stream_id, commitment.version) in published:
            continue
        published.add((commitment.stream_id, commitment.version))
        seq += 1
        digest = entry_hash(seq, commitment, previous)
        entries.append(FeedEntry(seq, commitment, digest, previous))
        previous = digest
    if entries:
        connection.execute(insert(commitment_feed), [entry.to_json() for entry in entries])
    return entries


def read_feed(
    engine: Engine, day: str | None = None, after_seq: int = 0, limit: int | None = None
) -> list[FeedEntry]:
    """The feed's entries in order after ``after_seq`` (of one UTC day ``YYYY-MM-DD``, if
    given; at most ``limit``)."""
    query = (
        select(commitment_feed)
        .where(commitment_feed.c.seq > after_seq)
        .order_by(commitment_feed.c.seq)
    )
    if day is not None:
        query = query.where(commitment_feed.c.day == day)
    if limit is not None:
        query = query.limit(limit)
    with engine.connect() as connection:
        return [entry_of(dict(row._mapping)) for row in connection.execute(query)]


def entry_of(row: dict[str, object]) -> FeedEntry:
    """An entry from its row (or its JSON)."""
    return FeedEntry(
        seq=int(str(row["seq"])),
        commitment=Commitment(
            stream_id=str(row["stream_id"]),
            version=int(str(row["version"])),
            game_no=int(str(row["game_no"])),
            round_no=int(str(row["round_no"])),
            fingerprint=str(row["fingerprint"]),
            committed_at=str(row["committed_at"]),
        ),
        hash=str(row["hash"]),
        previous_hash=str(row["previous_hash"]),
        signature=str(row.get("signature") or ""),
        key_id=str(row.get("key_id") or ""),
    )


def verify_feed(entries: Sequence[FeedEntry]) -> tuple[int, str] | None:
    """The first entry (its index) where the feed's chain breaks, and why (None: it holds).

    A sequence starting at seq 1 starts from ``GENESIS_HASH``; one starting
    later (a day of the feed) trusts its first entry's ``previous_hash``.
    """
    previous: FeedEntry | None = None
    for index, entry in enumerate(entries):
        if previous is None:
            if entry.seq == 1 and entry.previous_hash != GENESIS_HASH:
                return index, "the feed's first entry must link to the genesis hash"
        else:
            if entry.seq != previous.seq + 1:
                return index, f"follows entry {previous.seq}: an entry is missing or inserted"
            if entry.previous_hash != previous.hash:
                return index, (
                    f"its previous hash does not match the hash of entry {previous.seq}: "
                    "an entry before it was replaced"
                )
        if entry_hash(entry.seq, entry.commitment, entry.previous_hash) != entry.hash:
            return index, "its hash does not match its content: the entry was changed"
        previous = entry
    return None
