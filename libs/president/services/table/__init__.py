"""The table service: hosts tables; its outbox relay publishes their events to JetStream."""
