"""Where a table command runs: on the event loop, or in a worker thread.

The rule: every call runs its use case in a worker thread (the store and the
dealer client are synchronous; :class:`~president.hosting.host.TableHost`
serialises commands to one table), except a seat's play or pass when

- no call runs in a worker thread now (the service is otherwise idle),
- the store commits to a local SQLite file with no commit under way, and
- the table is in memory and settled here (nothing is read first), and
- no strong bot sits there (its search after the play would hold the loop).

Such a command's work is then the engine and one local commit, a fraction of
a millisecond, and the two hand-offs between threads it spares cost about as
much again: at one table, p50 3.0 -> 2.7 ms and 0.3 ms less table CPU per
play (README, "An idle table service runs a play or pass on its event
loop..."). It runs with
:meth:`~president.services.table.app.TableApp.handle_command_until_dealer`:
whatever would wait on the network (the dealer, after a round ends) comes back
as the outcome's pending step, and goes on in a worker thread under the same
command id (:meth:`~president.services.table.app.TableApp.run_dealer_step`),
so the log is the one a single run writes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from president.game.v1 import game_pb2 as gpb
from president.hosting.host import Outcome
from president.services.table.app import TableApp
from president.services.table.commands import Translated

T = TypeVar("T")
#: The commands that may run on the event loop: a seat's play or pass.
LOOP_COMMANDS = frozenset({"play_cards", "pass"})


class CommandExecutor:
    """Runs the table service's use cases in worker threads, and a quick play on the loop."""

    def __init__(self, app: TableApp) -> None:
        self._app = app
        #: Calls running in a worker thread now.
        self._in_workers = 0

    @property
    def calls_in_workers(self) -> int:
        """Calls running in a worker thread now."""
        return self._in_workers

    async def in_worker(self, work: Callable[[], T]) -> T:
        """``work()`` in a worker thread, counted: while any runs, no command runs on
        the event loop."""
        self._in_workers += 1
        try:
            return await asyncio.to_thread(work)
        finally:
            self._in_workers -= 1

    def table_ready_on_loop(self, table_id: str) -> bool:
        """A command to this table could run on the event loop: the table is in memory
        and settled here, no strong bot sits there, and the store commits to a local
        SQLite file with no commit under way."""
        group = self._app.store.group_commit
        return (
            group is not None
            and group.idle
            and self._app.settled_in_memory(table_id)
            and not self._app.has_searching_bot(table_id)
        )

    async def handle_command(
        self,
        kind: str | None,
        table_id: str,
        prepare: Callable[[], Translated],
        command_id: str,
        actor: gpb.Actor,
        expected_version: int | None,
    ) -> Outcome:
        """Run a command (of oneof ``kind``) where it is quickest (see the module's doc).

        ``prepare`` checks the request and makes the engine's command; it raises for
        bad input, wherever the command runs.
        """
        app = self._app
        if self._in_workers == 0 and kind in LOOP_COMMANDS and self.table_ready_on_loop(table_id):
            outcome = app.handle_command_until_dealer(
                table_id, prepare(), command_id, actor, expected_version
            )
            if outcome.pending is None:
                return outcome
            started = outcome
            return await self.in_worker(lambda: app.run_dealer_step(started))
        return await self.in_worker(
            lambda: app.handle_command(table_id, prepare(), command_id, actor, expected_version)
        )
