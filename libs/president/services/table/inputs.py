"""Input checks that need the table's state: what a command must carry at this table.

In rapid mode every play and pass answers a trick version: the first legal
play accepted wins the race, so a play that does not say which trick it
answers is refused (TRICK_VERSION_REQUIRED) rather than landing on a trick
its sender never saw. The server's and the bots' own commands are not
checked here: they are decided on the table itself.
"""

from __future__ import annotations

from president.hosting.projection import Table
from president.rules import round as rnd
from president.servicekit.checks import invalid
from president.services.table.commands import TableCommand


def check_input(command: TableCommand, table: Table) -> None:
    """INVALID_ARGUMENT when ``command`` lacks what this table requires of it."""
    if not isinstance(command, rnd.PlayCards | rnd.Pass):
        return
    if command.version is None and table.game.options.rapid:
        verb = "play" if isinstance(command, rnd.PlayCards) else "pass"
        raise invalid(
            "TRICK_VERSION_REQUIRED",
            f"in rapid mode a {verb} names the trick version it answers "
            "(round.trick_version of the view you chose it on)",
        )
