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
    """An archived copy of the feed (``president audit commitments --export``); ValueError."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise ValueError(f"{path} is not an archived commitment feed")
    return [entry_of(item) for item in data["entries"]]


def archive_json(feed: Sequence[FeedEntry]) -> str:
    """The feed as an archive file's text."""
    return json.dumps({"entries": [entry.to_json() for entry in feed]}, indent=1) + "\n"


def _against_entry(event: StoredEvent, entry: FeedEntry) -> Discrepancy | None:
    published = entry.commitment
    where = f"entry {entry.seq} of the commitment feed (day {published.day})"
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
