"""The table service's use cases, synchronous: the servicer runs them in worker threads.

Around :class:`TableHost`: the actor check, the retry after another replica
wrote first, the settling of tables left mid-command, views, the event log,
the table list, and the game's metrics. Every refusal is a domain error or a
:class:`ServiceError`; :func:`refusal` turns any of them into the latter.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from datetime import datetime

import grpc

from president import codec
from president.events.v1 import events_pb2 as pb
from president.game.v1 import game_pb2 as gpb
from president.rules import round as rnd
from president.rules.errors import Rejected
from president.rules.options import OptionError, options_for
from president.servicekit.checks import VISIBILITIES, invalid
from president.servicekit.checks import table_id as check_table_id
from president.servicekit.errors import ServiceError, from_domain
from president.servicekit.metrics import ACTIVE_TABLES, PLAYS, ROUNDS, TIMEOUTS
from president.servicekit.table_client import MAX_READ_EVENTS
from president.services.table.commands import React, Translated, check_actor
from president.services.table.directory import Summary, TableDirectory
from president.store import (
    AppendResult,
    CommandIdReused,
    ConcurrencyConflict,
    EventStore,
    NewEvent,
    StoredEvent,
)
from president.tables import (
    SERVER,
    Outcome,
    Table,
    TableExists,
    TableHost,
    TableNotFound,
    VersionMismatch,
    new_table_id,
    stream_id,
)
from president.viewproto import table_view

MAX_COMMAND_ID = 120
_COUNTED = {
    codec.type_name(pb.CardsPlayed): ("play", PLAYS),
    codec.type_name(pb.Passed): ("pass", PLAYS),
}
_ROUND_ENDED = codec.type_name(pb.RoundEnded)


class MeteredStore(EventStore):
    """The event store, counting the plays, passes and rounds this replica appends."""

    def append(
        self,
        stream_id: str,
        expected_version: int,
        events_to_append: Sequence[NewEvent],
        command_id: str,
        *,
        time: datetime | None = None,
    ) -> AppendResult:
        result = super().append(
            stream_id, expected_version, events_to_append, command_id, time=time
        )
        if result.first_version == expected_version + 1:  # written now, not a repeat
            for event in events_to_append:
                counted = _COUNTED.get(event.type)
                if counted is not None:
                    counted[1].labels(counted[0]).inc()
                elif event.type == _ROUND_ENDED:
                    ROUNDS.inc()
        return result


def refusal(error: Exception) -> ServiceError:
    """The gRPC refusal of any error a use case raises (re-raises unexpected ones)."""
    if isinstance(error, ServiceError):
        return error
    if isinstance(error, TableNotFound):
        return ServiceError(grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND", str(error))
    if isinstance(error, TableExists):
        return ServiceError(grpc.StatusCode.ALREADY_EXISTS, "TABLE_EXISTS", str(error))
    if isinstance(error, VersionMismatch):
        return ServiceError(
            grpc.StatusCode.ABORTED,
            "STALE_VERSION",
            str(error),
            {"version": str(error.actual)},
        )
    if isinstance(error, ConcurrencyConflict):
        return ServiceError(
            grpc.StatusCode.ABORTED,
            "CONFLICT",
            "another replica kept changing this table: reload it and try again",
        )
    if isinstance(error, CommandIdReused):
        return invalid("COMMAND_ID_REUSED", str(error))
    if isinstance(error, Rejected | OptionError):
        return from_domain(error)
    raise error


def check_command_id(command_id: str) -> str:
    """INVALID_ARGUMENT for an over-long command id."""
    if len(command_id) > MAX_COMMAND_ID or not command_id.isprintable():
        raise invalid(
            "INVALID_COMMAND_ID",
            f"a command id has at most {MAX_COMMAND_ID} printable characters",
        )
    return command_id


class TableApp:
    """Tables: create, command, time out, view, read, list."""

    def __init__(
        self,
        store: EventStore,
        host: TableHost,
        directory: TableDirectory,
        *,
        max_read: int = MAX_READ_EVENTS,
    ) -> None:
        #: The most events one ReadEvents returns.
        self.max_read = max_read
        self._store = store
        self._host = host
        self._directory = directory
        self._settled: set[str] = set()

    # -- commands ------------------------------------------------------------
    def create(
        self,
        table_id: str,
        preset: str,
        options: dict[str, str],
        seat_count: int,
        visibility: str,
        host_player_id: str,
        command_id: str,
    ) -> Table:
        """A new table in the lobby; the same command id creates it once."""
        check_command_id(command_id)
        if not table_id:
            table_id = (
                hashlib.sha256(command_id.encode()).hexdigest()[:12]
                if command_id
                else new_table_id()
            )
        check_table_id(table_id)
        visibility = visibility or "practice"
        if visibility not in VISIBILITIES:
            raise invalid(
                "INVALID_VISIBILITY",
                f"visibility is practice, public or private, not {visibility!r}",
            )
        chosen = options_for(preset or "classic", dict(options))
        table = self._host.create(
            table_id,
            chosen,
            seat_count=seat_count or None,
            visibility=visibility,
            host_player_id=host_player_id,
            command_id=command_id or f"create-{table_id}-{uuid.uuid4().hex[:12]}",
            actor=host_player_id or SERVER,
        )
        self._settled.add(table_id)
        self._directory.note(table)
        self._gauge()
        return table

    def execute(
        self,
        table_id: str,
        translated: Translated,
        command_id: str,
        actor: gpb.Actor,
        expected_version: int | None,
        *,
        call_dealer: bool = True,
    ) -> Outcome:
        """Run a command as ``actor``; once per command id.

        ``call_dealer=False``: stop before a step that needs the dealer (see
        :meth:`TableHost.execute`); :meth:`finish` does the rest.
        """
        check_table_id(table_id)
        check_command_id(command_id)

        def authorize(table: Table) -> None:
            occupant, leaving = None, False
            if translated.seat is not None and translated.seat < len(table.game.seats):
                seat = table.game.seats[translated.seat]
                occupant, leaving = seat.player, seat.leaving
            check_actor(translated, actor, occupant, table.host_player_id, leaving=leaving)

        self._settle(table_id)
        player = actor.player_id or SERVER
        command = translated.command
        try:
            if isinstance(command, React):
                authorize(self._load(table_id))
                return self._host.react(
                    table_id, command.seat, command.reaction, command_id, player
                )
            # The host catches up and decides again once if another replica wrote first.
            return self._host.execute(
                table_id,
                command,
                command_id,
                player,
                expected_version=expected_version,
                authorize=authorize,
                call_dealer=call_dealer,
            )
        except ServiceError:
            self._settled.discard(table_id)  # the dealer failed mid-command: settle next time
            raise
        finally:
            self._noted(table_id)

    def finish(self, table_id: str, command_id: str, started: Outcome) -> Outcome:
        """Finish a command that stopped before the dealer; the whole command's outcome."""
        try:
            return self._host.finish(table_id, command_id, started)
        except ServiceError:
            self._settled.discard(table_id)
            raise
        finally:
            self._noted(table_id)

    def runs_on_loop(self, table_id: str) -> bool:
        """A command to this table may run on the event loop (``call_dealer=False``):
        the table is in memory and settled here, so nothing is read first, and the
        store commits to a local SQLite file with no commit under way."""
        group = self._store.group_commit
        return (
            group is not None
            and group.idle
            and table_id in self._settled
            and self._host.cached(table_id) is not None
        )

    def timeout(self, table_id: str, timer_key: int, game_no: int, round_no: int) -> Outcome:
        """The timer expired; STALE when the table moved on."""
        check_table_id(table_id)
        game = self._settle(table_id).game
        state = game.round
        kind = "turn"
        if state is not None and state.phase == rnd.RoundPhase.EXCHANGE:
            kind = "exchange"
        elif state is not None and state.options.rapid:
            kind = "rapid"
        try:
            outcome = self._host.timeout(table_id, timer_key, game_no, round_no)
        except ConcurrencyConflict:
            outcome = self._host.timeout(table_id, timer_key, game_no, round_no)
        except ServiceError:
            self._settled.discard(table_id)
            raise
        TIMEOUTS.labels(kind).inc()
        self._noted(table_id)
        return outcome

    # -- queries -------------------------------------------------------------
    def view(self, table_id: str, seat: int | None) -> gpb.TableView:
        """The table as ``seat`` (or a spectator) sees it."""
        check_table_id(table_id)
        table = self._load(table_id)
        if seat is not None and not 0 <= seat < len(table.game.seats):
            raise invalid("NO_SUCH_SEAT", f"seat {seat} is not a seat of this table")
        return table_view(table, seat)

    def read_events(self, table_id: str, after_version: int, limit: int) -> list[StoredEvent]:
        """The table's stored events after a version, in order: at most ``limit``, and never
        more than ``max_read`` (also for ``limit`` 0); a reader pages for the rest."""
        check_table_id(table_id)
        count = min(limit, self.max_read) if limit else self.max_read
        stored = self._store.read_stream(stream_id(table_id), after_version + 1, count)
        if not stored and self._store.current_version(stream_id(table_id)) == 0:
            raise TableNotFound(f"no table {table_id!r}")
        return stored

    def list_tables(self, open_only: bool) -> list[Summary]:
        """Known tables, brought up to date with the store."""
        self._directory.refresh()
        return self._directory.summaries(open_only)

    # -- internals -----------------------------------------------------------
    def _load(self, table_id: str) -> Table:
        with self._host.lock(table_id):
            return self._host.load(table_id)

    def _settle(self, table_id: str) -> Table:
        """The table, with whatever an interrupted command left undone finished first.

        Settled once per table in this process; after that the host's own copy
        serves (its appends check the version, so a stale copy is caught).
        """
        if table_id not in self._settled:
            try:
                self._host.settle(table_id)
                self._settled.add(table_id)
            except ConcurrencyConflict:
                pass  # another replica is moving the table on right now
        return self._host.cached(table_id) or self._load(table_id)

    def forget_idle(self, idle_seconds: float) -> int:
        """Drop the tables idle for ``idle_seconds`` from memory; how many went."""
        dropped = self._host.forget_idle(idle_seconds)
        for table_id in dropped:
            self._settled.discard(table_id)
        ACTIVE_TABLES.set(len(self._host.table_ids()))
        return len(dropped)

    def _noted(self, table_id: str) -> None:
        """Tell the table list how this replica left the table; update the gauge."""
        table = self._host.cached(table_id)
        if table is not None:
            self._directory.note(table)
        self._gauge()

    def _gauge(self) -> None:
        ACTIVE_TABLES.set(len(self._host.table_ids()))
