"""The commitment feed checked: its own chain, an archived copy, and the tables' logs against it.

The feed (:mod:`president.store.commitments`) published every round's
fingerprint when it was committed, outside the table's log. So an insider
who stores another history for a round (another secret, another
fingerprint, with every hash of the table's log recomputed) is caught
without any player's help: the table's ``DealCommitted`` differs from the
entry published at the time. To rewrite the feed too, they would have to
recompute its chain, which a copy anyone archived shows
(:func:`check_archive`). :func:`check_feed` gives the first discrepancy, or
None; :func:`unpublished` names commitments of the logs the feed does not
hold yet. The feed is published in commit order, so its commit times never
run backwards by more than the services' clocks differ: an entry dated
before the entries published ahead of it was written into a table's log
later, back-dated (a game appended after the fact): :func:`backdated`.

The store's feed is in the database an insider can write; the copy anyone
archived from its JetStream stream (``president audit archive``, JSON lines:
:func:`load_archive`) is not. :class:`ArchivedFeed` checks the tables' logs
against such a copy directly, so a round replaced with the store's feed
rewritten to match (its chain recomputed) is named at the round's
``DealCommitted``. Each entry of that copy carries the operator's signature of
its head; :func:`unsigned_entry` names one the operator's keys did not sign
(a forged archive, which must not accuse the logs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from president import codec
from president.audit.reports import Discrepancy, short_type
from president.events.v1 import events_pb2 as pb
from president.hosting.events import DealCommitted
from president.hosting.signatures import OperatorKeys, feed_head_bytes
from president.store import StoredEvent
from president.store.commitments import FeedEntry, entry_of, verify_feed

FEED = "commitment feed"
"""The stream name a discrepancy of the feed itself carries."""
_DEAL_COMMITTED = codec.type_name(pb.DealCommitted)
CLOCK_TOLERANCE = timedelta(seconds=60)
"""How far the commit times of entries in feed order may run backwards (replicas' clocks)."""


def check_feed(
    feed: Sequence[FeedEntry],
    logs: Iterable[Sequence[StoredEvent]],
    archives: Sequence[tuple[str, Sequence[FeedEntry]]] = (),
) -> Discrepancy | None:
    """The first discrepancy between the feed, its archived copies and the tables' logs."""
    broken = verify_feed(feed)
    if broken is not None:
        index, reason = broken
        return Discrepancy(FEED, feed[index].seq, "FeedEntry", reason)
    for source, archive in archives:
        problem = check_archive(feed, archive, source)
        if problem is not None:
            return problem
    published = {(e.commitment.stream_id, e.commitment.version): e for e in feed}
    for events in logs:
        for event in events:
            entry = published.get((event.stream_id, event.version))
            if entry is None:
                continue
            problem = _against_entry(event, entry)
            if problem is not None:
                return problem
    return None


def backdated(
    feed: Sequence[FeedEntry], tolerance: timedelta = CLOCK_TOLERANCE
) -> Discrepancy | None:
    """The first entry committed, by its time, well before an entry published ahead of it."""
    latest: FeedEntry | None = None
    latest_time: datetime | None = None
    for entry in feed:
        try:
            at = datetime.fromisoformat(entry.commitment.committed_at)
        except ValueError:
            return Discrepancy(FEED, entry.seq, "FeedEntry", "its commit time is no ISO 8601 time")
        if latest is not None and latest_time is not None and at < latest_time - tolerance:
            return Discrepancy(
                FEED,
                entry.seq,
                "FeedEntry",
                f"it was committed at {entry.commitment.committed_at}, "
                f"{(latest_time - at).total_seconds():g} s before entry {latest.seq} "
                f"({latest.commitment.committed_at}), which was published ahead of it: "
                f"{entry.commitment.stream_id} version {entry.commitment.version} was written "
                "into its log later and back-dated",
            )
        if latest_time is None or at > latest_time:
            latest, latest_time = entry, at
    return None


def unpublished(feed: Sequence[FeedEntry], logs: Iterable[Sequence[StoredEvent]]) -> list[str]:
    """The logs' commitments the feed does not hold, in words (the feed lags a moment)."""
    published = {(e.commitment.stream_id, e.commitment.version) for e in feed}
    missing = []
    for events in logs:
        for event in events:
            if event.type == _DEAL_COMMITTED and (event.stream_id, event.version) not in published:
                missing.append(
                    f"{event.stream_id} version {event.version} (committed {event.time}) "
                    "is not in the commitment feed"
                )
    return missing


def check_archive(
    feed: Sequence[FeedEntry], archive: Sequence[FeedEntry], source: str
) -> Discrepancy | None:
    """The feed holds every entry of an archived copy, unchanged."""
    by_seq = {entry.seq: entry for entry in feed}
    for kept in archive:
        entry = by_seq.get(kept.seq)
        if entry is None:
            return Discrepancy(
                FEED,
                kept.seq,
                "FeedEntry",
                f"the feed has no entry {kept.seq}, which the archived copy {source} holds: "
                "entries were removed",
            )
        if entry.hash != kept.hash:
            return Discrepancy(
                FEED,
                kept.seq,
                "FeedEntry",
                f"its hash {entry.hash[:12]}… differs from {kept.hash[:12]}… in the archived "
                f"copy {source}: the feed was rewritten at or before this entry (it published "
                f"fingerprint {kept.commitment.fingerprint[:16]}… for {kept.commitment.stream_id} "
                f"version {kept.commitment.version})",
            )
    return None


def load_archive(path: str | Path) -> list[FeedEntry]:
    """An archived copy of the feed: JSON lines, one entry each (``president audit archive``,
    ``president audit commitments --export``); ValueError naming the line that is none."""
    entries = []
    text = Path(path).read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            entries.append(entry_of(item))
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(
                f"{path} line {number} is not an entry of the commitment feed ({error})"
            ) from None
    return entries


def unsigned_entry(
    entries: Sequence[FeedEntry], keys: OperatorKeys
) -> tuple[FeedEntry, str] | None:
    """The first archived entry whose head the operator's keys did not sign, and why (None:
    every one is signed over :func:`president.hosting.signatures.feed_head_bytes`)."""
    for entry in entries:
        reason = ""
        try:
            signature = bytes.fromhex(entry.signature)
        except ValueError:
            signature = b""
        if not entry.signature:
            reason = "it carries no signature"
        elif entry.key_id not in keys.ids:
            reason = f"its key {entry.key_id!r} is none of the keys given"
        elif not keys.signed(feed_head_bytes(entry.seq, entry.hash), entry.key_id, signature):
            reason = f"the signature does not match its place and hash under key {entry.key_id}"
        if reason:
            return entry, reason
    return None


def forged_words(source: str, entry: FeedEntry, reason: str) -> str:
    """A sentence: an archive's entry the operator did not sign."""
    return (
        f"entry {entry.seq} of the archived feed {source} was not signed by the operator's key "
        f"({reason}): the operator did not publish it, and the archive proves nothing about "
        "the logs"
    )


def archive_lines(feed: Iterable[FeedEntry]) -> str:
    """Entries as an archive's text: one JSON line each."""
    return "".join(json.dumps(entry.to_json(), sort_keys=True) + "\n" for entry in feed)


class ArchivedFeed:
    """An archived copy of the feed, to check the tables' logs against, table by table.

    Each round a log commits must be the one the archive holds for its event,
    and each commitment the archive holds for a table must be in its log;
    a commitment the log holds and the archive does not, though the archive
    holds later commitments (the feed publishes in commit order), was written
    into the log after the fact.
    """

    def __init__(self, entries: Sequence[FeedEntry], source: str) -> None:
        self.entries = entries
        self.source = source
        self._by_event = {(e.commitment.stream_id, e.commitment.version): e for e in entries}
        times = [t for t in (_time(e.commitment.committed_at) for e in entries) if t is not None]
        self._covers = (min(times), max(times)) if times else None
        """From when to when the archive holds every commitment published."""

    def check_chain(self) -> Discrepancy | None:
        """The archive's own chain holds (it may begin at any entry)."""
        broken = verify_feed(self.entries)
        if broken is None:
            return None
        index, reason = broken
        return Discrepancy(
            FEED, self.entries[index].seq, "FeedEntry", f"{reason} (in the archive {self.source})"
        )

    def check_log(self, events: Sequence[StoredEvent]) -> Discrepancy | None:
        """The first place where a table's log departs from the archive (None: none)."""
        if not events:
            return None
        stream = events[0].stream_id
        first = events[0].version
        archived = sorted(
            (e for e in self.entries if e.commitment.stream_id == stream),
            key=lambda e: e.commitment.version,
        )
        for entry in archived:
            index = entry.commitment.version - first
            if not 0 <= index < len(events):
                return Discrepancy(
                    stream,
                    events[-1].version,
                    short_type(events[-1].type),
                    f"entry {entry.seq} of the commitment feed (archived in {self.source}) "
                    f"published round {entry.commitment.round_no} of game "
                    f"{entry.commitment.game_no}, committed at version {entry.commitment.version}, "
                    "but the log ends before it: rounds were erased from the log",
                )
            problem = _against_entry(events[index], entry, f"archived in {self.source}")
            if problem is not None:
                return problem
        for event in events:
            if event.type != _DEAL_COMMITTED or (stream, event.version) in self._by_event:
                continue
            at = _time(event.time)
            if at is None or self._covers is None:
                continue
            since, until = self._covers
            if since + CLOCK_TOLERANCE < at < until - CLOCK_TOLERANCE:
                return Discrepancy(
                    stream,
                    event.version,
                    "DealCommitted",
                    f"the archive {self.source} holds every commitment published from "
                    f"{since.isoformat()} to {until.isoformat()}, but not this one, committed "
                    f"{event.time}: the round was written into the log after the fact",
                )
        return None

    def missing_tables(self, streams: Iterable[str]) -> Discrepancy | None:
        """A table the archive published a round of, that the store does not hold."""
        held = set(streams)
        for entry in self.entries:
            if entry.commitment.stream_id not in held:
                return Discrepancy(
                    entry.commitment.stream_id,
                    entry.commitment.version,
                    "DealCommitted",
                    f"entry {entry.seq} of the commitment feed (archived in {self.source}) "
                    "published a round of this table, but the store has no log of it: the "
                    "table's log was removed",
                )
        return None


def _time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _against_entry(event: StoredEvent, entry: FeedEntry, kept: str = "") -> Discrepancy | None:
    published = entry.commitment
    where = f"entry {entry.seq} of the commitment feed ({kept or f'day {published.day}'})"
    if event.type != _DEAL_COMMITTED:
        return Discrepancy(
            event.stream_id,
            event.version,
            short_type(event.type),
            f"{where} published a deal committed at this version, but the log has a "
            f"{short_type(event.type)} here: the log was rewritten at or before this event",
        )
    try:
        committed = codec.decode(event.type, event.payload)
    except Exception:  # the log's own audit reports an unreadable payload
        return None
    assert isinstance(committed, DealCommitted)
    if (committed.game_no, committed.round_no, committed.fingerprint) != (
        published.game_no,
        published.round_no,
        published.fingerprint,
    ):
        return Discrepancy(
            event.stream_id,
            event.version,
            "DealCommitted",
            f"it commits round {committed.round_no} of game {committed.game_no} with "
            f"fingerprint {committed.fingerprint[:16]}…, but {where} published round "
            f"{published.round_no} of game {published.game_no} with fingerprint "
            f"{published.fingerprint[:16]}… when it was committed: the round's deal was "
            "replaced after the fact",
        )
    return None
