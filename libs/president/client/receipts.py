"""The receipts a client keeps of its table: the chain hash of every change it received.

Every change (and the snapshot that starts a stream) carries the hash of the
table's event at its version (``WatchResponse.receipt_hash``). A
:class:`Receipts` keeps them, version by version, checks that consecutive
ones link (``receipt_previous_hash``), and writes them to a JSON file that
``president audit verify --receipts FILE`` reads: the auditor then knows
which events the player saw, and where a stored log departs from them. A
receipt holds a version, a hash and an event type, nothing else: nothing a
seat could not see.

The file::

    {"format": "president-receipts/1", "table_id": "...", "holder": "...",
     "receipts": [{"version": 7, "hash": "…", "previous_hash": "…", "type": "…",
                   "signature": "…", "key_id": "…"}, ...]}

``signature`` (128 hex digits) and ``key_id`` are the operator's signature
of the receipt (:mod:`president.hosting.signatures`), absent if it came
unsigned.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from president.gateway.v1 import gateway_pb2 as pb

FORMAT = "president-receipts/1"


@dataclass(frozen=True)
class Receipt:
    """What a client received of one event: its version, chain hashes and type."""

    version: int
    hash: str
    previous_hash: str = ""
    type: str = ""
    signature: str = ""
    """The operator's signature of the receipt, hex (empty: it came unsigned)."""
    key_id: str = ""
    """The id of the key that signed it."""

    def to_json(self) -> dict[str, Any]:
        signed = {"signature": self.signature, "key_id": self.key_id} if self.signature else {}
        return {
            "version": self.version,
            "hash": self.hash,
            "previous_hash": self.previous_hash,
            "type": self.type,
        } | signed


class Receipts:
    """The receipts of one table, as one client received them."""

    def __init__(self, table_id: str = "", holder: str = "") -> None:
        self.table_id = table_id
        self.holder = holder
        self._kept: dict[int, Receipt] = {}
        self.conflicts: list[tuple[Receipt, Receipt]] = []
        """Pairs of receipts the gateway sent that do not agree (the first kept, the other)."""

    def keep(self, change: pb.WatchResponse) -> Receipt | None:
        """Keep the receipt of a change (None: it carries none)."""
        if not change.receipt_hash or change.version <= 0:
            return None
        receipt = Receipt(
            version=change.version,
            hash=change.receipt_hash,
            previous_hash=change.receipt_previous_hash,
            type=change.event.type if change.HasField("event") else "",
            signature=change.receipt_signature.hex(),
            key_id=change.receipt_key_id,
        )
        kept = self._kept.get(receipt.version)
        if kept is not None:
            if kept.hash != receipt.hash:
                self.conflicts.append((kept, receipt))
            return kept
        for neighbour, later in (
            (self._kept.get(receipt.version - 1), receipt),
            (receipt, self._kept.get(receipt.version + 1)),
        ):
            if (
                neighbour is not None
                and later is not None
                and later.previous_hash
                and later.previous_hash != neighbour.hash
            ):
                self.conflicts.append((neighbour, later))
        self._kept[receipt.version] = receipt
        return receipt

    def __len__(self) -> int:
        return len(self._kept)

    def __iter__(self) -> Any:
        return iter(sorted(self._kept.values(), key=lambda item: item.version))

    def get(self, version: int) -> Receipt | None:
        """The receipt of ``version``, if one was kept."""
        return self._kept.get(version)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "table_id": self.table_id,
            "holder": self.holder,
            "receipts": [receipt.to_json() for receipt in self],
        }

    def export(self, path: str | Path) -> Path:
        """Write the receipts to ``path`` (JSON); returns the path."""
        target = Path(path)
        target.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        return target
