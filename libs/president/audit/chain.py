"""The log's tamper evidence: its hash chain, and the hashes a player kept (anchors).

The chain (:func:`president.store.verify_chain`) catches a changed, removed,
inserted or reordered event. Anchors map versions to event hashes a player
kept (every published event carries its hash): a stored event whose hash
differs, or a log shorter than a kept version, is a discrepancy. They also
catch a log rewritten from some event on with every hash recomputed, and
say where: at or before the first kept hash that differs, after the last
one before it that matches.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from president.audit.receipts import HeldReceipt
from president.audit.reports import Found
from president.store import StoredEvent, verify_chain


def chain_break(events: Sequence[StoredEvent]) -> tuple[int, Found | None]:
    """How many events the hash chain holds together, and its first break (None: none)."""
    error = verify_chain(events)
    if error is None:
        return len(events), None
    return error.index, Found(events[error.index], error.reason)


class Anchors:
    """The hashes a player kept, and the first kept version the log departs from.

    A kept hash covers its event and, through the chain, every event before
    it: the first kept hash that differs says the log was rewritten at or
    before its event, and after the last kept version before it whose hash
    matches. With every hash kept, that is the very event.
    """

    def __init__(
        self,
        events: Sequence[StoredEvent],
        kept: Mapping[int, str],
        shown_by: Mapping[int, HeldReceipt] | None = None,
        agreeing: Mapping[int, HeldReceipt] | None = None,
    ) -> None:
        """``shown_by``: the receipt behind a kept hash, named in the report;
        ``agreeing``: another receipt of that version that has the log's hash."""
        self.kept = kept
        self.shown_by = shown_by or {}
        self.agreeing = agreeing or {}
        self.first_differing: int | None = None
        self.last_matching: int | None = None
        if not kept:
            return
        first = events[0].version if events else 1
        for version in sorted(kept):
            index = version - first
            if not 0 <= index < len(events):
                continue
            if events[index].hash != kept[version]:
                self.first_differing = version
                return
            self.last_matching = version

    def __bool__(self) -> bool:
        return bool(self.kept)

    def __contains__(self, version: object) -> bool:
        return version in self.kept

    def __iter__(self) -> Iterator[int]:
        return iter(self.kept)

    def check(self, group: Sequence[StoredEvent]) -> None:
        """Found at the first kept version that differs, if it is in ``group``."""
        differing = self.first_differing
        if differing is None or not group[0].version <= differing <= group[-1].version:
            return
        event = group[differing - group[0].version]
        kept = self.kept[differing]
        matching = self.last_matching
        if matching == differing - 1:
            where = (
                f"the log was rewritten at this event (the hash kept for version {matching} "
                "matches)"
            )
        elif matching is not None:
            where = (
                f"the log was rewritten at or before this event, after version {matching} "
                "(whose kept hash matches)"
            )
        else:
            where = (
                "the log was rewritten at or before this event (no earlier kept hash "
                "narrows it down)"
            )
        receipt = self.shown_by.get(differing)
        kept_by = f"in {receipt.words()}" if receipt is not None else "kept for this version"
        other = self.agreeing.get(differing)
        if other is not None:
            where = (
                f"{other.words()} has the log's hash: the gateway showed its holders "
                "different histories at this version, or a receipt was forged"
            )
        raise Found(
            event,
            f"its hash {event.hash[:12]}… differs from the hash {kept[:12]}… {kept_by}: {where}",
        )


def check_not_cut_off(events: Sequence[StoredEvent], anchors: Anchors) -> None:
    """The log reaches every version a player kept a hash for."""
    last_kept = max(anchors, default=0)
    if last_kept > len(events):
        receipt = anchors.shown_by.get(last_kept)
        kept_by = f" ({receipt.words()})" if receipt is not None else ""
        raise Found(
            events[-1],
            f"the log ends at version {events[-1].version}, but a hash was kept for "
            f"version {last_kept}{kept_by}: events were cut off the end of the log",
        )
