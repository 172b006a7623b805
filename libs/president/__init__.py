"""The President table backend: rules engine, committed deal, event store, audit."""
