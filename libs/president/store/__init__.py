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
"""

from president.store.chain import GENESIS_HASH, ChainError, event_hash, verify_chain
from president.store.engine import create_store_engine, normalise_url
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
from president.store.store import BatchHandler, EventStore, Handler

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
    "migrate",
    "normalise_url",
    "verify_chain",
]
