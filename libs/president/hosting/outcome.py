"""What a hosted command did (:class:`Outcome`), where one stopped before the dealer, and who
the server is: the values :class:`president.hosting.host.TableHost` answers with."""

from __future__ import annotations

from dataclasses import dataclass, field

from president.store import StoredEvent

#: The actor of the commands the server makes itself (deals, reveals, timeouts).
SERVER = "server"


@dataclass(frozen=True)
class PendingDealerStep:
    """Where a command's follow-ups stopped, before a step that needs the dealer.

    ``step`` numbers the follow-ups so that going on from there gives each
    the command id it would have had in one go.
    """

    table_id: str
    command_id: str
    step: int


@dataclass(frozen=True)
class Outcome:
    """What a command did: the table's version after it and its follow-ups."""

    version: int
    events: int
    #: Every event the command and its follow-ups committed, in version order
    #: (empty for a command id that ran before: it committed nothing now). Not
    #: compared: a retry has the first run's outcome.
    committed: tuple[StoredEvent, ...] = field(default=(), compare=False)
    #: What is left of the command, from
    #: :meth:`TableHost.decide_and_append_until_dealer`: the follow-ups that need
    #: the dealer, for :meth:`TableHost.run_dealer_step`. None: nothing is left.
    pending: PendingDealerStep | None = None
    #: A follow-up failed after the command itself was committed: the table waits
    #: for the server (the next command, or the timer, finishes it).
    unfinished: bool = field(default=False, compare=False)
