"""The event store: append-only streams with optimistic concurrency, idempotent
appends, a gap-free global order for followers, a hash chain per stream, and
consumer tracking, on SQLite (embedded default) or PostgreSQL.

::

    from president.store import EventStore, NewEvent, verify_chain

    store = EventStore.from_url("sqlite:///var/store.db", migrate=True)
    result = store.append("table-42", 0, [NewEvent.from_message(msg, {"actor": "p1"})], "cmd-1")
    assert verify_chain(store.read_stream("table-42")) is None
    for event in store.read_all(after=None, limit=100):  # then after=event.position
        ...
    store.process("scores", handler)  # handler(event, connection), tracked exactly once

The schema belongs to Alembic: ``migrate(url)`` runs ``upgrade head`` (also
``alembic -c libs/president/store/migrations/alembic.ini -x url=... upgrade head``).

The modules, after pyeventsourcing's recorder ladder (each level builds on the one before):

- ``records``: the values the store takes and gives back, and its errors;
- ``chain``: the per-stream hash chain and ``verify_chain``;
- ``recorder``: the bottom rung, the engine, its backend and short reads;
- ``streams``: level 1, appends with optimistic concurrency and idempotency, stream reads;
- ``log``: level 2, ``read_all``, the gap-free global order;
- ``tracking``: level 3, consumers' positions, ``process`` and ``process_batch``;
- ``store``: ``EventStore``, every level, opened with ``from_url``;
- ``backends``: what differs between the databases, chosen once per store;
  ``sqlite`` and ``postgres`` implement it;
- ``faults``: which failures pass (the database away), so a call is tried again;
- ``fast_append``: the append right after a known stream head, in one raw INSERT;
- ``group_commit``: SQLite appends that queue for the writer, in one commit;
- ``engine``, ``schema``, ``migrate`` (and ``migrations/``): URLs and engines,
  the tables as the queries see them, and the Alembic migrations that own them.
"""

from president.store.chain import GENESIS_HASH, ChainError, event_hash, verify_chain
from president.store.engine import create_store_engine, normalise_url
from president.store.faults import is_transient
from president.store.migrate import head_revision, migrate
from president.store.records import (
    JSON,
    AppendResult,
    CommandIdReused,
    ConcurrencyConflict,
    NewEvent,
    Position,
    SchemaNotReady,
    StoredEvent,
    StoreError,
)
from president.store.store import EventStore
from president.store.tracking import BatchHandler, Handler

__all__ = [
    "GENESIS_HASH",
    "JSON",
    "AppendResult",
    "BatchHandler",
    "ChainError",
    "CommandIdReused",
    "ConcurrencyConflict",
    "EventStore",
    "Handler",
    "NewEvent",
    "Position",
    "SchemaNotReady",
    "StoreError",
    "StoredEvent",
    "create_store_engine",
    "event_hash",
    "head_revision",
    "is_transient",
    "migrate",
    "normalise_url",
    "verify_chain",
]
