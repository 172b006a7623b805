"""The table service's own events on a hosted table: reactions, the host's handover, and a
waiting table moving on or closing. Each appends once per command id, compared with
its digest (:mod:`president.hosting.retries`); the engine's commands go through
:meth:`president.hosting.host.TableHost.decide_and_append`.

:class:`OwnEvents` is a part of :class:`~president.hosting.host.TableHost`, which
provides the loading, the locks and the appends it names.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from president.hosting.autoplay import bot_actor
from president.hosting.errors import VersionMismatch
from president.hosting.events import ReactionShown, SeatPresence, TableClosed, TableEvent
from president.hosting.host_role import handover
from president.hosting.move_on import move_on
from president.hosting.outcome import SERVER, Outcome
from president.hosting.projection import Table, is_current
from president.hosting.retries import check_same, command_digest
from president.hosting.streams import stream_id
from president.rules import game as g
from president.rules import round as rnd
from president.rules.errors import ErrorCode, Rejected
from president.store import AppendResult, EventStore, StoredEvent


class OwnEvents(ABC):
    """Reactions, host handovers and moving on: the table host's own commands."""

    _store: EventStore

    @abstractmethod
    def lock(self, table_id: str) -> threading.Lock:
        """The lock that serialises commands to one table in this process."""

    @abstractmethod
    def load(self, table_id: str) -> Table:
        """The table, brought up to date with its stream."""

    @abstractmethod
    def decide_and_append(
        self,
        table_id: str,
        command: g.GameCommand | rnd.Command,
        command_id: str,
        actor: str,
        *,
        expected_version: int | None = None,
        authorize: Callable[[Table], None] | None = None,
    ) -> Outcome:
        """Run one engine command and what follows from it."""

    @abstractmethod
    def _collecting(self, table_id: str) -> AbstractContextManager[list[StoredEvent]]:
        """Collect what the appends to ``table_id`` commit meanwhile."""

    @abstractmethod
    def _commit(
        self,
        table: Table,
        events: Sequence[TableEvent],
        command_id: str,
        actor: str,
        digest: str | None = None,
    ) -> AppendResult:
        """Append events to the table and fold them into it."""

    def append_reaction(
        self,
        table_id: str,
        seat: int,
        reaction: str,
        command_id: str,
        actor: str,
        expected_version: int | None = None,
    ) -> Outcome:
        """Show a reaction from an occupied seat (a ``ReactionShown`` event); with
        ``expected_version``, only if the table is at that version (else VersionMismatch)."""
        shown = ReactionShown(seat=seat, reaction=reaction)

        def reacting(table: Table) -> list[TableEvent]:
            if expected_version is not None and not is_current(table, expected_version):
                raise VersionMismatch(table_id, expected_version, table.version)
            seats = table.game.seats
            if not 0 <= seat < len(seats) or not seats[seat].occupied:
                raise Rejected(ErrorCode.NO_SUCH_SEAT, f"nobody sits in seat {seat}")
            return [shown]

        return self._append_own(table_id, command_id, actor, shown, reacting)

    def set_presence(
        self,
        table_id: str,
        report: SeatPresence,
        command_id: str,
        actor: str,
        authorize: Callable[[Table], None] | None = None,
    ) -> Outcome:
        """A gateway replica reports a seat's person connected or not (a ``SeatPresence``
        event; nothing when the table already counts it so)."""

        def reporting(table: Table) -> list[TableEvent]:
            if authorize is not None:
                authorize(table)
            already = (report.seat, report.gateway) in table.presence
            return [] if already == report.connected else [report]

        return self._append_own(table_id, command_id, actor, report, reporting)

    def hand_over_host(
        self,
        table_id: str,
        seat: int,
        command_id: str,
        actor: str,
        authorize: Callable[[Table], None] | None = None,
    ) -> Outcome:
        """The host hands the host role to the human in ``seat`` (a ``HostChanged`` event)."""

        def handing(table: Table) -> list[TableEvent]:
            if authorize is not None:
                authorize(table)
            return [handover(table, seat)]

        return self._append_own(table_id, command_id, actor, ("hand_over_host", seat), handing)

    def move_on(
        self,
        table_id: str,
        kind: str,
        game_no: int,
        round_no: int,
        command_id: str,
        timer_key: int = 0,
    ) -> Outcome:
        """The table waited too long (``kind``) in ``game_no``, ``round_no``: it moves on by itself
        (:func:`president.hosting.move_on.move_on`), closes when nobody is left, or, in
        rapid play, lets its next bot move (on table version ``timer_key``). STALE when it
        moved on meanwhile (a repeated MoveOn too)."""
        with self.lock(table_id):
            loaded = self.load(table_id)
            step = move_on(loaded, kind, game_no, round_no, timer_key)

        def same_step(table: Table) -> None:
            # The same version is the same table: its step stands (a strong bot's search is
            # random, so deciding again may choose another move that is just as good).
            if table.version == loaded.version:
                return
            if move_on(table, kind, game_no, round_no, timer_key) != step:
                raise Rejected(ErrorCode.STALE, "the table moved on since")

        if isinstance(step, TableClosed):

            def closing(table: Table) -> list[TableEvent]:
                same_step(table)
                return [step]

            return self._append_own(table_id, command_id, SERVER, step, closing)
        actor = (
            bot_actor(loaded.game, step.seat)
            if isinstance(step, rnd.PlayCards | rnd.Pass)
            else SERVER
        )
        return self.decide_and_append(table_id, step, command_id, actor, authorize=same_step)

    def _append_own(
        self,
        table_id: str,
        command_id: str,
        actor: str,
        what: object,
        events_of: Callable[[Table], list[TableEvent]],
    ) -> Outcome:
        """Append the table service's own events for a command (a reaction, a host change,
        the closing), once per command id: ``events_of`` decides them on the table."""
        digest = command_digest(what, actor)
        with self.lock(table_id), self._collecting(table_id) as committed:
            earlier = self._store.command_result(command_id, stream_id(table_id))
            if earlier is not None:
                check_same(self._store, earlier, command_id, digest)
                self.load(table_id)
                return Outcome(earlier.last_version, len(earlier.versions))
            table = self.load(table_id)
            events = events_of(table)
            if not events:  # nothing changes (a presence the table counts already)
                return Outcome(table.version, 0)
            result = self._commit(table, events, command_id, actor, digest)
            return Outcome(result.last_version, len(result.versions), tuple(committed))
