"""The ``president.players`` package."""
