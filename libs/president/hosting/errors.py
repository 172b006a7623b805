"""The table host's refusals that are not the rules': no such table, one exists, a stale version.

Domain errors only: the table service's handlers turn them into gRPC statuses.
"""

from __future__ import annotations


class TableNotFound(LookupError):
    """No table has this id."""


class TableExists(LookupError):
    """A table with this id exists already."""


class VersionMismatch(Exception):
    """The command named a table version the table is no longer (or not yet) at."""

    def __init__(self, table_id: str, expected: int, actual: int) -> None:
        super().__init__(
            f"the table moved on: this was chosen on version {expected} of table {table_id}, "
            f"which is at version {actual} now; look at the table again and choose anew"
        )
        self.table_id = table_id
        self.expected = expected
        self.actual = actual


class CommandConflict(Exception):
    """A command id that ran before came again with other content: not a retry."""

    def __init__(self, command_id: str) -> None:
        super().__init__(
            f"command id {command_id!r} was used before for another command: "
            "send a new command with a new id"
        )
        self.command_id = command_id


class RateExceeded(Exception):
    """A seat reacted (chatted) more often than its rate allows
    (:mod:`president.hosting.seat_rates`): ``reason`` names which, ``wait`` how long until
    one more is taken."""

    def __init__(self, reason: str, sentence: str, wait_seconds: float) -> None:
        super().__init__(sentence)
        self.reason = reason
        self.wait_seconds = wait_seconds
