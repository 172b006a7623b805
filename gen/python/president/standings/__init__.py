"""The ``president.standings`` package."""
