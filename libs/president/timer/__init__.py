"""The ``president.timer`` package."""
