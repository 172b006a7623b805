"""The ``president`` command line."""
