"""The ``president.events`` package."""
