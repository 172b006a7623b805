"""Alembic environment of the event store: ``president.store.migrate`` runs it."""
