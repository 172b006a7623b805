"""The event store's migrations, oldest first."""
