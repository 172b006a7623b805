"""The event store: append-only streams with optimistic concurrency, idempotent
appends, a gap-free global order for followers, a hash chain per stream, and
consumer tracking, on SQLite (embedded default) or PostgreSQL.

::

    from president.store import EventStore, NewEvent, migrate

    migrate("sqlite:///var/store.db")          # alembic upgrade head
    store = EventStore.from_url("sqlite:///var/store.db")
    result = store.append("table-42", 0, [NewEvent.from_message(msg)], command_id="c-1")
    events = store.read_stream("table-42")
    assert verify_chain(events) is None
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
from president.store.store import EventStore, Handler

__all__ = [
    "GENESIS_HASH",
    "JSON",
    "AppendResult",
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
