"""The ``president.scoring`` package."""
