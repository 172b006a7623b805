"""The auditor's check of stored table logs: every deal, exchange, play and score.

The public surface; each job has its own module:

- :mod:`~president.audit.verify`: :func:`verify_table`, the walk of one table's log;
- :mod:`~president.audit.chain`: the hash chain and the hashes a player kept;
- :mod:`~president.audit.receipts`: the receipts players kept, what they prove;
- :mod:`~president.audit.integrity`: hidden data and the unhashed command columns;
- :mod:`~president.audit.clock`: times, and timeouts against the deadline rules;
- :mod:`~president.audit.actors`: who may cause each command;
- :mod:`~president.audit.deals`: each round's committed deal, its deal and its reveal;
- :mod:`~president.audit.commands`: the log read as commands, rebuilt from their events;
- :mod:`~president.audit.explain`: the sentences that say what differs;
- :mod:`~president.audit.reports`: what the audit reports, and :func:`summarise`;
- :mod:`~president.audit.replay`: a verified log folded event by event;
- :mod:`~president.audit.export`: stored rounds as rules scenarios.

The audit is pure: it reads the events it is given and does no I/O.
"""

from president.audit.commands import command_for, command_groups, decode
from president.audit.deals import REVEAL_GRACE
from president.audit.export import round_scenarios
from president.audit.receipts import BadReceipts, Proof, ReceiptFile, load_receipts, proven
from president.audit.replay import replay_events, seat_names
from president.audit.reports import (
    IN_PROGRESS,
    SECRET_LOST,
    VERIFIED,
    WITHDRAWN,
    AuditSummary,
    Discrepancy,
    TableReport,
    short_type,
    summarise,
)
from president.audit.verify import verify_table

__all__ = [
    "IN_PROGRESS",
    "REVEAL_GRACE",
    "SECRET_LOST",
    "VERIFIED",
    "WITHDRAWN",
    "AuditSummary",
    "BadReceipts",
    "Discrepancy",
    "Proof",
    "ReceiptFile",
    "TableReport",
    "command_for",
    "command_groups",
    "decode",
    "load_receipts",
    "proven",
    "replay_events",
    "round_scenarios",
    "seat_names",
    "short_type",
    "summarise",
    "verify_table",
]
