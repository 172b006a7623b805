"""The ``president.game`` package."""
