"""The ``president.tournaments`` package."""
