"""Receipts: the chain hashes players and spectators kept of the changes they received.

A receipt names a version of a table's log and the hash of its event there
(every change a seat receives carries one: ``WatchResponse.receipt_hash``;
:class:`president.client.Receipts` keeps them and writes them to a file).
Through the hash chain, a receipt whose hash the log has proves that event
and every event before it as the holder saw them; the first receipt the log
does not match shows where it departs: the log was rewritten at or before
that event. This module reads receipt files (:func:`load_receipts`), says
what they prove (:func:`proven`), and turns them into the kept hashes the
walk checks (:func:`receipt_anchors`), each with the receipt that shows it.
A receipt proves something only if the operator signed it: :func:`unsigned`
names the first one the operator's published keys did not sign (a forged
file), which must not accuse the log.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from president.hosting.signatures import OperatorKeys, receipt_bytes
from president.hosting.streams import stream_id
from president.store import StoredEvent

FORMAT = "president-receipts/1"
"""The receipts file format (as :data:`president.client.receipts.FORMAT`)."""

_HASH = re.compile(r"[0-9a-f]{64}")


class BadReceipts(ValueError):
    """A receipts file that cannot be read, in one sentence."""


@dataclass(frozen=True)
class HeldReceipt:
    """One receipt and who holds it."""

    version: int
    hash: str
    holder: str
    source: str
    type: str = ""
    signature: str = ""
    """The operator's signature of the receipt, hex (empty: none)."""
    key_id: str = ""

    def words(self) -> str:
        kind = f" ({self.type.rsplit('.', 1)[-1]})" if self.type else ""
        return f"{self.holder}'s receipt of version {self.version}{kind} in {self.source}"


@dataclass(frozen=True)
class ReceiptFile:
    """The receipts of one file: one holder's of one table."""

    source: str
    table_id: str
    holder: str
    receipts: tuple[HeldReceipt, ...]


def load_receipts(path: str | Path) -> ReceiptFile:
    """Read a receipts file; :class:`BadReceipts` with a sentence if it is not one."""
    source = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise BadReceipts(f"--receipts {source}: cannot read it ({error.strerror})") from None
    except ValueError as error:
        raise BadReceipts(f"--receipts {source}: not JSON ({error})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BadReceipts(f"--receipts {source}: not a {FORMAT} file")
    holder = str(data.get("holder") or Path(path).stem)
    items = data.get("receipts")
    if not isinstance(items, list):
        raise BadReceipts(f"--receipts {source}: 'receipts' is not a list")
    held = []
    for index, item in enumerate(items):
        version = item.get("version") if isinstance(item, dict) else None
        digest = item.get("hash") if isinstance(item, dict) else None
        if (
            not isinstance(version, int)
            or isinstance(version, bool)
            or version < 1
            or not isinstance(digest, str)
            or not _HASH.fullmatch(digest)
        ):
            raise BadReceipts(
                f"--receipts {source}: receipt {index} needs a version (1 or more) and a "
                "64-digit lowercase hex hash"
            )
        kind = item.get("type", "")
        signature, signer = item.get("signature", ""), item.get("key_id", "")
        if not isinstance(signature, str) or not isinstance(signer, str):
            raise BadReceipts(
                f"--receipts {source}: receipt {index}'s signature and key_id are text"
            )
        held.append(
            HeldReceipt(version, digest, holder, source, str(kind or ""), signature, signer)
        )
    return ReceiptFile(source, str(data.get("table_id") or ""), holder, tuple(held))


@dataclass(frozen=True)
class Forged:
    """A receipt the operator's keys did not sign, and why, in words."""

    receipt: HeldReceipt
    reason: str

    def words(self) -> str:
        return (
            f"{self.receipt.words()} was not signed by the operator's key ({self.reason}): "
            "the operator did not issue it, and it proves nothing about the log"
        )


def unsigned(files: Sequence[ReceiptFile], table_id: str, keys: OperatorKeys) -> Forged | None:
    """The first receipt of ``files`` (of table ``table_id``) without the operator's signature
    over its stated bytes (:func:`president.hosting.signatures.receipt_bytes`); None: all
    are signed."""
    stream = stream_id(table_id)
    for file in files:
        for receipt in file.receipts:
            reason = _unsigned_because(receipt, stream, keys)
            if reason:
                return Forged(receipt, reason)
    return None


def _unsigned_because(receipt: HeldReceipt, stream: str, keys: OperatorKeys) -> str:
    if not receipt.signature:
        return "it carries no signature"
    if receipt.key_id not in keys.ids:
        return f"its key {receipt.key_id!r} is none of the keys given"
    try:
        signature = bytes.fromhex(receipt.signature)
    except ValueError:
        return "its signature is not hex"
    message = receipt_bytes(stream, receipt.version, receipt.hash)
    if not keys.signed(message, receipt.key_id, signature):
        return (
            f"the signature does not match its table, version and hash under key {receipt.key_id}"
        )
    return ""


def receipt_anchors(
    events: Sequence[StoredEvent], files: Sequence[ReceiptFile]
) -> tuple[dict[int, str], dict[int, HeldReceipt]]:
    """The kept hashes of ``files`` by version, and the receipt behind each.

    Where receipts of one version disagree, the one the log departs from is
    kept: it is the evidence.
    """
    first = events[0].version if events else 1
    kept: dict[int, str] = {}
    shown_by: dict[int, HeldReceipt] = {}
    for file in files:
        for receipt in file.receipts:
            index = receipt.version - first
            stored = events[index].hash if 0 <= index < len(events) else None
            earlier = kept.get(receipt.version)
            if earlier is not None and earlier != stored:
                continue  # a departing receipt is already kept for this version
            kept[receipt.version] = receipt.hash
            shown_by[receipt.version] = receipt
    return kept, shown_by


def agreeing(events: Sequence[StoredEvent], files: Sequence[ReceiptFile]) -> dict[int, HeldReceipt]:
    """For each version where receipts disagree, one receipt that has the log's hash."""
    first = events[0].version if events else 1
    matching: dict[int, HeldReceipt] = {}
    departing: set[int] = set()
    for file in files:
        for receipt in file.receipts:
            index = receipt.version - first
            if 0 <= index < len(events) and events[index].hash == receipt.hash:
                matching.setdefault(receipt.version, receipt)
            else:
                departing.add(receipt.version)
    return {version: held for version, held in matching.items() if version in departing}


@dataclass(frozen=True)
class Proof:
    """What the receipts prove of a log."""

    receipts: int
    holders: tuple[str, ...]
    proven_through: int
    """Every event up to this version is as the holders saw it (0: none)."""
    matching: int
    """Receipts whose hash the log has."""


def proven(events: Sequence[StoredEvent], files: Sequence[ReceiptFile]) -> Proof:
    """How far the receipts prove the log: up to the last version whose hash matches, before
    the first that does not."""
    first = events[0].version if events else 1
    matching = 0
    through = 0
    departs: int | None = None
    count = 0
    for file in files:
        for receipt in file.receipts:
            count += 1
            index = receipt.version - first
            if 0 <= index < len(events) and events[index].hash == receipt.hash:
                matching += 1
                through = max(through, receipt.version)
            elif departs is None or receipt.version < departs:
                departs = receipt.version
    if departs is not None:
        through = max(
            (
                r.version
                for file in files
                for r in file.receipts
                if r.version < departs
                and 0 <= r.version - first < len(events)
                and events[r.version - first].hash == r.hash
            ),
            default=0,
        )
    holders = tuple(dict.fromkeys(file.holder for file in files))
    return Proof(count, holders, through, matching)
