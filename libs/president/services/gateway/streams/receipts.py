"""A change's receipt: the hash-chain hashes of the event it shows, put on the ``WatchResponse``.

Every change a watcher receives, and the snapshot that starts a stream,
carries the chain hash of the table's event at its version and the hash
before it (``receipt_hash``, ``receipt_previous_hash``), and the operator's
signature of the receipt the table service made (``receipt_signature``,
``receipt_key_id``: :mod:`president.hosting.signatures`). A hash reveals
nothing a seat could not see (every stored event's hash covers a blinding
value the seat never receives: :mod:`president.hosting.blinding`), and a
client that keeps them can later prove what the log held
(:mod:`president.client.receipts`, ``president audit verify --receipts``).
"""

from __future__ import annotations

from typing import TypeVar

from president.events.v1 import events_pb2 as epb
from president.gateway.v1 import gateway_pb2 as pb

Change = TypeVar("Change", bound=pb.WatchResponse)


def receipt(change: Change, envelope: epb.EventEnvelope) -> Change:
    """``change`` with the receipt of ``envelope``, the event at its version."""
    change.receipt_hash = envelope.hash
    change.receipt_previous_hash = envelope.previous_hash
    if envelope.signature:
        change.receipt_signature = envelope.signature
        change.receipt_key_id = envelope.key_id
    return change
