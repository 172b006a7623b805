"""The table service's use cases, synchronous: the executor runs them in worker threads
(or, for a quick play, on the event loop: :mod:`president.services.table.executor`).

Around :class:`TableHost`: the actor check, the retry after another replica
wrote first, the settling of tables left mid-command, views, the event log,
the table list, and the game's metrics. A refusal is a domain error (the
host's, the rules', the store's) or a :class:`ServiceError` of an input
check; the handlers turn each into its gRPC status.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from president import codec
from president.events.v1 import events_pb2 as pb
from president.game.v1 import game_pb2 as gpb
from president.hosting.autoplay import has_searching_bot
from president.hosting.deadlines import waits_for_server
from president.hosting.errors import TableNotFound
from president.hosting.host import SERVER, Commanded, Outcome, TableHost, new_table_id
from president.hosting.projection import Table
from president.hosting.seat_views import table_view
from president.hosting.streams import stream_id
from president.hosting.visibility import PRACTICE, PRIVATE, VISIBILITIES
from president.rules import round as rnd
from president.rules.options import check_table_rules, options_for, with_table_defaults
from president.servicekit.checks import invalid
from president.servicekit.checks import stored_command_id as check_command_id
from president.servicekit.checks import table_id as check_table_id
from president.servicekit.config.table import EvictionRules
from president.servicekit.metrics import ACTIVE_TABLES, PLAYS, ROUNDS, TIMEOUTS
from president.servicekit.names import table_name
from president.servicekit.table_client import MAX_READ_EVENTS
from president.services.table.commands import TableCommand, Translated
from president.services.table.directory import Query, Summary, TableDirectory
from president.services.table.eviction import table_gone
from president.services.table.inputs import check_input
from president.services.table.rights import check_actor
from president.store import AppendResult, ConcurrencyConflict, EventStore, StoredEvent

_COUNTED = {
    codec.type_name(pb.CardsPlayed): ("play", PLAYS),
    codec.type_name(pb.Passed): ("pass", PLAYS),
}
_ROUND_ENDED = codec.type_name(pb.RoundEnded)

#: How the host runs a command: to the end, or until a step that needs the dealer.
HostRun = Callable[..., Outcome]


def count_appended(result: AppendResult) -> None:
    """Count the plays, passes and rounds of an append this replica wrote (the host's
    ``on_appended`` hook; a repeated command's result carries no events)."""
    for event in result.events:
        counted = _COUNTED.get(event.type)
        if counted is not None:
            counted[1].labels(counted[0]).inc()
        elif event.type == _ROUND_ENDED:
            ROUNDS.inc()


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
        name: str = "",
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
        chosen = options_for(
            preset or "classic", with_table_defaults(options, practice=visibility == PRACTICE)
        )
        check_table_rules(chosen, private=visibility == PRIVATE, practice=visibility == PRACTICE)
        name = table_name(name)
        table = self._host.create(
            table_id,
            chosen,
            seat_count=seat_count or None,
            visibility=visibility,
            host_player_id=host_player_id,
            command_id=command_id or f"create-{table_id}-{uuid.uuid4().hex[:12]}",
            actor=host_player_id or SERVER,
            name=name,
        )
        self._settled.add(table_id)
        self._directory.note(table)
        self._gauge()
        return table

    def handle_command(
        self,
        table_id: str,
        translated: Translated,
        command_id: str,
        actor: gpb.Actor,
        expected_version: int | None,
    ) -> Outcome:
        """Run a command as ``actor``, with all that follows from it; once per command id."""
        return self._handle(
            table_id, translated, command_id, actor, expected_version, self._host.decide_and_append
        )

    def handle_command_until_dealer(
        self,
        table_id: str,
        translated: Translated,
        command_id: str,
        actor: gpb.Actor,
        expected_version: int | None,
    ) -> Outcome:
        """As :meth:`handle_command`, but stop before a step that needs the dealer: the
        outcome's ``pending`` step is then for :meth:`run_dealer_step`."""
        return self._handle(
            table_id,
            translated,
            command_id,
            actor,
            expected_version,
            self._host.decide_and_append_until_dealer,
        )

    def run_dealer_step(self, started: Outcome) -> Outcome:
        """Finish a command that stopped before the dealer; the whole command's outcome."""
        pending = started.pending
        if pending is None:
            return started
        try:
            outcome = self._host.run_dealer_step(started)
        except Exception:
            self._settled.discard(pending.table_id)  # the dealer or store failed: settle next time
            raise
        finally:
            self._noted(pending.table_id)
        if outcome.unfinished:  # committed, but a follow-up failed: settle next time
            self._settled.discard(pending.table_id)
        return outcome

    def settled_in_memory(self, table_id: str) -> bool:
        """The table is in memory and settled here: a command to it reads nothing first
        and finds no step an interrupted command left undone."""
        cached = self._host.cached(table_id)
        return table_id in self._settled and cached is not None and not waits_for_server(cached)

    def has_searching_bot(self, table_id: str) -> bool:
        """A strong bot sits at this table (in memory): the bots' moves after a command take
        tens of milliseconds each."""
        table = self._host.cached(table_id)
        return table is not None and has_searching_bot(table.game)

    @property
    def store(self) -> EventStore:
        """The event store the tables are in."""
        return self._store

    def _handle(
        self,
        table_id: str,
        translated: Translated,
        command_id: str,
        actor: gpb.Actor,
        expected_version: int | None,
        run: HostRun,
    ) -> Outcome:
        check_table_id(table_id)
        check_command_id(command_id)
        self._check_not_gone(table_id)

        def on_table(table: Table) -> TableCommand:
            """The command to decide on this very table: the actor's rights checked, its
            seat found, its input checked against the table. (A reaction's or a chat
            message's rate is the host's to decide, from the times the log keeps.)"""
            command = check_actor(translated, actor, table)
            if actor.player_id != SERVER:
                check_input(command, table)
            return command

        # A command that names its seat (or needs none) is itself, checked on the table: a
        # retry of it is known before it is decided. One that names no seat is made there.
        command: Commanded = on_table if translated.for_seat else translated.command
        self._settle(table_id)
        try:
            # The host catches up and decides again once if another replica wrote first.
            outcome = run(
                table_id,
                command,
                command_id,
                actor.player_id or SERVER,
                expected_version=expected_version,
                authorize=None if translated.for_seat else on_table,
            )
        except Exception:
            self._settled.discard(table_id)  # the dealer or store failed: settle next time
            raise
        finally:
            self._noted(table_id)
        if outcome.unfinished:  # committed, but a follow-up failed: settle next time
            self._settled.discard(table_id)
        return outcome

    def timeout(self, table_id: str, timer_key: int, game_no: int, round_no: int) -> Outcome:
        """The timer expired; STALE when the table moved on."""
        check_table_id(table_id)
        self._check_not_gone(table_id)
        table = self._settle(table_id)
        state = table.game.round
        kind = "turn"
        if waits_for_server(table):
            kind = "server"
        elif state is not None and state.phase == rnd.RoundPhase.EXCHANGE:
            kind = "exchange"
        elif state is not None and state.options.rapid:
            kind = "rapid"
        try:
            outcome = self._host.timeout(table_id, timer_key, game_no, round_no)
        except ConcurrencyConflict:
            outcome = self._host.timeout(table_id, timer_key, game_no, round_no)
        except Exception:
            self._settled.discard(table_id)
            raise
        TIMEOUTS.labels(kind).inc()
        self._noted(table_id)
        return outcome

    # -- queries -------------------------------------------------------------
    def view(self, table_id: str, seat: int | None) -> gpb.TableView:
        """The table as ``seat`` (or a spectator) sees it."""
        check_table_id(table_id)
        self._check_not_gone(table_id)
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

    def list_tables(self, open_only: bool, query: Query | None = None) -> list[Summary]:
        """Known tables: brought up to date with the store first, unless the directory is
        refreshed in the background (then a list never waits on folding a burst)."""
        if not self._directory.followed:
            self._directory.refresh()
        return self._directory.summaries(open_only, query)

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

    def evict(self, rules: EvictionRules, now: datetime | None = None) -> list[str]:
        """Evict the finished and abandoned tables (:mod:`president.services.table.eviction`)
        and drop from memory every evicted table this replica holds; the ids dropped."""
        now = now or datetime.now(UTC)
        self._directory.refresh()
        self._directory.evict(
            now - timedelta(seconds=rules.finished_seconds),
            now - timedelta(seconds=rules.abandoned_seconds),
        )
        gone = self._directory.evicted_among(self._host.table_ids())
        dropped = self._host.forget(gone)
        for table_id in dropped:
            self._settled.discard(table_id)
        self._gauge()
        return dropped

    def _check_not_gone(self, table_id: str) -> None:
        """TABLE_GONE for an evicted table (checked when it is not in memory: the sweep
        drops every evicted table it finds there)."""
        if self._host.cached(table_id) is None and self._directory.evicted_among([table_id]):
            raise table_gone(table_id)

    def _noted(self, table_id: str) -> None:
        """Tell the table list how this replica left the table; update the gauge."""
        table = self._host.cached(table_id)
        if table is not None:
            self._directory.note(table)
        self._gauge()

    def _gauge(self) -> None:
        ACTIVE_TABLES.set(len(self._host.table_ids()))
