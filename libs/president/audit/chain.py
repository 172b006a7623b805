"""The log's tamper evidence: its hash chain, and the hashes a player kept (anchors).

The chain (:func:`president.store.verify_chain`) catches a changed, removed,
inserted or reordered event. Anchors map versions to event hashes a player
kept (every published event carries its hash): a stored event whose hash
differs, or a log shorter than a kept version, is a discrepancy. They also
catch a log rewritten from some event on with every hash recomputed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from president.audit.reports import Found
from president.store import StoredEvent, verify_chain


def chain_break(events: Sequence[StoredEvent]) -> tuple[int, Found | None]:
    """How many events the hash chain holds together, and its first break (None: none)."""
    error = verify_chain(events)
    if error is None:
        return len(events), None
    return error.index, Found(events[error.index], error.reason)


def check_anchors(group: Sequence[StoredEvent], anchors: Mapping[int, str]) -> None:
    """Every event of ``group`` has the hash a player kept for its version, if one was kept."""
    for event in group:
        kept = anchors.get(event.version)
        if kept is not None and kept != event.hash:
            raise Found(
                event,
                f"its hash {event.hash[:12]}… differs from the hash {kept[:12]}… kept "
                "for this version: the log was rewritten from this event on",
            )


def check_not_cut_off(events: Sequence[StoredEvent], anchors: Mapping[int, str]) -> None:
    """The log reaches every version a player kept a hash for."""
    last_kept = max(anchors, default=0)
    if last_kept > len(events):
        raise Found(
            events[-1],
            f"the log ends at version {events[-1].version}, but a hash was kept for "
            f"version {last_kept}: events were cut off the end of the log",
        )
