"""The ``president.dealer`` package."""
