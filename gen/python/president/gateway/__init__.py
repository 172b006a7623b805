"""The ``president.gateway`` package."""
