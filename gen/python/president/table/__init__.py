"""The ``president.table`` package."""
