"""The table application service: commands in, events appended to the store.

For each command, :class:`TableHost` loads the table (from memory, or by
replaying its stream), asks the rules engine, and appends the resulting
events with the expected version and the command id. Around each round it
runs the committed deal through a :class:`DealerPort`: ``DealCommitted``
(the fingerprint) before the cards, ``DealRevealed`` (the secret) after the
round's end. Bots and stand-ins for players who left act as their own
commands right after the command that gave them the turn.

A command's follow-ups that need the dealer (a network call) can be left
for later: :meth:`TableHost.decide_and_append_until_dealer` returns them as
a :class:`PendingDealerStep` in its outcome, and
:meth:`TableHost.run_dealer_step` runs them, as one call would have.

A command whose own events are committed answers success even when a
follow-up fails afterwards (the dealer or the database away): its result is
in the store under its command id, and the table, left waiting for the
server (:func:`~president.hosting.deadlines.waits_for_server`), is finished by
the next command or the timer's server deadline. No command is decided on a
table that waits for the server: what the server owes (a reveal, a deal) is
done first, so a round never starts before the last one's secret is stored.

It does no networking itself: the table service wraps it in gRPC, the
``president play --db`` command and the tests use it directly.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime

from president import codec
from president.deal import DEAL_VERSION
from president.hosting.autoplay import bot_actor, next_bot_command
from president.hosting.blinding import BLIND, Blinding, blinding_value
from president.hosting.commands import (
    HandOverHost,
    MoveOn,
    React,
    SetPresence,
    TableCommand,
    bind,
    decide,
    digest_of,
    legacy_digest_of,
)
from president.hosting.deadlines import bots_wait, needs_reveal, waits_for_server
from president.hosting.dealer import DealerPort, RoundKey, SecretLost, deal_command
from president.hosting.errors import (
    CommandConflict,
    RateExceeded,
    TableExists,
    TableNotFound,
    VersionMismatch,
)
from president.hosting.events import (
    DealCommitted,
    DealRevealed,
    DealSecretLost,
    SeatPresence,
    TableCreated,
    TableEvent,
)
from president.hosting.host_role import successor
from president.hosting.outcome import SERVER, Outcome, PendingDealerStep
from president.hosting.projection import Table, fold, fold_stored, is_current
from president.hosting.retries import DIGEST, check_same
from president.hosting.seat_rates import over_rate
from president.hosting.streams import stream_id
from president.rules import game as g
from president.rules import round as rnd
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import Options
from president.store import AppendResult, ConcurrencyConflict, EventStore, NewEvent, StoredEvent

MAX_FOLLOW_UPS = 2_000
#: A command, or how to make it from the very table it is decided on (the table service
#: finds the seat of a seat command there).
Commanded = TableCommand | Callable[[Table], TableCommand]
_log = logging.getLogger(__name__)


class TableHost:
    """Hosts tables: loads them, decides every command on them
    (:func:`president.hosting.commands.decide`), appends the events."""

    def __init__(
        self,
        store: EventStore,
        dealer: DealerPort,
        *,
        on_appended: Callable[[AppendResult], None] | None = None,
        clock: Callable[[], datetime] | None = None,
        rapid_bots_wait: bool = False,
        blinding: Blinding = blinding_value,
    ) -> None:
        """``clock`` stamps each append's time (None: now in UTC), taken before the command
        is decided (:mod:`president.hosting.seat_rates` decides at it); a recorded game
        gives a simulated clock so its timeouts come at their deadlines.
        ``blinding`` gives each event's blinding value (:mod:`president.hosting.blinding`;
        only a seeded recorded game gives another source than the secure one)."""
        self._clock = clock
        self._blinding = blinding
        self._store = store
        self._dealer = dealer
        #: In rapid play, bots wait their ``bot_delay_ms`` for the timer's ``MoveOn``
        #: instead of moving right after the command that gave them a move.
        self._rapid_bots_wait = rapid_bots_wait
        self._tables: dict[str, Table] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        # Table id -> when a command last took its lock (time.monotonic()).
        self._last_used: dict[str, float] = {}
        # Table id -> the time of its last event this host knows: a new event is never
        # stamped before it (a replica whose clock runs behind the one that served the
        # table before it goes on from that time, so a table's time never goes backwards).
        self._stamps: dict[str, datetime] = {}
        self._on_appended = on_appended
        # Table id -> the events committed by the command running on it (under its lock).
        self._committing: dict[str, list[StoredEvent]] = {}

    def _now(self, table_id: str) -> datetime:
        """The time an append to the table is stored at: the host's clock (or now in UTC),
        never before the table's last stamp (see ``_stamps``)."""
        now = datetime.now(UTC) if self._clock is None else self._clock()
        last = self._stamps.get(table_id)
        return now if last is None or now >= last else last

    # -- loading -------------------------------------------------------------
    def lock(self, table_id: str) -> threading.Lock:
        """The lock that serialises commands to one table in this process."""
        with self._locks_guard:
            self._last_used[table_id] = time.monotonic()
            return self._locks.setdefault(table_id, threading.Lock())

    def forget_idle(self, idle_seconds: float, now: float | None = None) -> list[str]:
        """Drop from memory the tables no command touched for ``idle_seconds``.

        The store keeps them: the next command loads the table again. A table
        whose lock is held stays. (A command that took the lock object just
        before its table was dropped may run beside one that takes the new
        lock: the append's expected version still lets only one of them write.)
        Returns the ids dropped.
        """
        cutoff = (time.monotonic() if now is None else now) - idle_seconds
        return self._drop(lambda _table_id, used: used <= cutoff)

    def forget(self, table_ids: Iterable[str]) -> list[str]:
        """Drop these tables from memory (as :meth:`forget_idle` does); the ids dropped."""
        chosen = set(table_ids)
        return self._drop(lambda table_id, _used: table_id in chosen)

    def _drop(self, due: Callable[[str, float], bool]) -> list[str]:
        dropped: list[str] = []
        with self._locks_guard:
            for table_id, used in list(self._last_used.items()):
                if not due(table_id, used):
                    continue
                lock = self._locks.get(table_id)
                if lock is not None and not lock.acquire(blocking=False):
                    continue
                self._tables.pop(table_id, None)
                self._stamps.pop(table_id, None)
                self._locks.pop(table_id, None)
                del self._last_used[table_id]
                dropped.append(table_id)
                if lock is not None:
                    lock.release()
        return dropped

    def load(self, table_id: str) -> Table:
        """The table, brought up to date with its stream."""
        cached = self._tables.get(table_id)
        after = cached.version if cached is not None else 0
        stored = self._store.read_stream(stream_id(table_id), after + 1)
        if cached is None and not stored:
            raise TableNotFound(f"no table {table_id!r}")
        table = fold_stored(cached, stored)
        assert table is not None
        self._tables[table_id] = table
        if stored:
            self._stamps[table_id] = _stamp_of(stored[-1])
        return table

    def _reload(self, table_id: str) -> Table:
        """The table after a refusal or a conflict: brought up to date, or read again from the
        start when the store is behind this copy (a failover to a standby that had not
        received the last events: appending after them would leave a hole, so the table
        goes on from what the store kept)."""
        cached = self._tables.get(table_id)
        if cached is not None and self._store.current_version(stream_id(table_id)) < cached.version:
            del self._tables[table_id]
        return self.load(table_id)

    def cached(self, table_id: str) -> Table | None:
        """The table as this host last left it, without reading the store (None if not loaded)."""
        return self._tables.get(table_id)

    def table_ids(self) -> list[str]:
        """The tables this host has loaded."""
        return list(self._tables)

    # -- commands ------------------------------------------------------------
    def create(
        self,
        table_id: str,
        options: Options,
        *,
        seat_count: int | None = None,
        visibility: str = "practice",
        host_player_id: str = "",
        command_id: str | None = None,
        actor: str = SERVER,
        name: str = "",
    ) -> Table:
        """Create a table in the lobby (idempotent for the same command id), named ``name``."""
        empty = g.new_table(options, seat_count)
        created = TableCreated(
            table_id=table_id,
            preset=options.preset,
            options=codec.option_texts(options),
            host_player_id=host_player_id,
            visibility=visibility,
            seat_count=len(empty.seats),
            name=name,
        )
        command_id = command_id or f"create-{table_id}"
        with self.lock(table_id):
            try:
                self._append(table_id, 0, [created], command_id, actor)
            except ConcurrencyConflict:
                raise TableExists(f"a table {table_id!r} exists already") from None
            return self.load(table_id)

    def decide_and_append(
        self,
        table_id: str,
        command: Commanded,
        command_id: str,
        actor: str,
        *,
        expected_version: int | None = None,
        authorize: Callable[[Table], object] | None = None,
    ) -> Outcome:
        """Run one command through the engine, append its events, and what follows from
        it (deal, reveal, bot moves).

        A command id that ran before returns its first outcome and runs
        nothing. With ``expected_version``, the command runs only if the table
        is at that version (else :class:`VersionMismatch`). ``authorize`` is
        called with the very table the engine decides on (raising refuses the
        command), so a check of who may act never sees an older table.
        """
        return self._decide_and_append(
            table_id, command, command_id, actor, expected_version, authorize, until_dealer=False
        )

    def decide_and_append_until_dealer(
        self,
        table_id: str,
        command: Commanded,
        command_id: str,
        actor: str,
        *,
        expected_version: int | None = None,
        authorize: Callable[[Table], object] | None = None,
    ) -> Outcome:
        """As :meth:`decide_and_append`, but the follow-ups stop before a step that needs
        the dealer (a network call): the outcome then carries it as ``pending``, and
        :meth:`run_dealer_step` does the rest, as one call would have."""
        return self._decide_and_append(
            table_id, command, command_id, actor, expected_version, authorize, until_dealer=True
        )

    def run_dealer_step(self, started: Outcome) -> Outcome:
        """Finish a command whose outcome has a pending dealer step.

        Its follow-ups run under the same command id as they would have in
        one go; the outcome is the whole command's.
        """
        pending = started.pending
        if pending is None:
            return started
        table_id = pending.table_id
        with self.lock(table_id), self._collecting(table_id) as committed:
            _, unfinished = self._follow_up_committed(
                table_id, pending.command_id, first_step=pending.step
            )
            return Outcome(
                self._tables[table_id].version,
                started.events,
                (*started.committed, *committed),
                unfinished=unfinished,
            )

    def _decide_and_append(
        self,
        table_id: str,
        command: Commanded,
        command_id: str,
        actor: str,
        expected_version: int | None,
        authorize: Callable[[Table], object] | None,
        *,
        until_dealer: bool,
    ) -> Outcome:
        # What the command was bound to on the table last decided on, and who acts it.
        acting = actor
        # Known before deciding for a command that stands for itself; else once bound.
        fixed = None if callable(command) or isinstance(command, MoveOn) else command
        digest = digest_of(fixed, actor) if fixed is not None else ""
        # The command as digested (and who acts it), for a retry's check in either format.
        digested: tuple[TableCommand, str] | None = (fixed, actor) if fixed is not None else None

        def bound_on(table: Table) -> TableCommand:
            """The command as it stands on ``table`` (its seat found), and who acts it."""
            nonlocal acting, digest, digested
            if authorize is not None:
                authorize(table)
            if fixed is not None:
                return fixed
            made = command(table) if callable(command) else command
            bound, acting = bind(table, made, actor)
            digest = digest_of(bound, acting)
            digested = (bound, acting)
            return bound

        def decide_on(table: Table) -> list[TableEvent]:
            events = decide(table, bound_on(table))
            _check_rates(table, events, at)
            return events

        with self.lock(table_id), self._collecting(table_id) as committed:
            # Optimistic: decide on the cached table. The append's expected
            # version catches a cache another replica made stale, and its
            # command id catches a retry; the store is read again only when
            # the engine refuses or the version does not match.
            table = self._tables.get(table_id) or self.load(table_id)
            if waits_for_server(table):  # what the server owes first (raises if it cannot)
                table = self._settled(table_id)
            # The time the events will be stored at, taken under the lock before each
            # decision: a reaction's (chat message's) rate is decided at the time the log keeps.
            at = self._now(table_id)
            try:
                if expected_version is not None and not is_current(table, expected_version):
                    table = self.load(table_id)
                    if expected_version is not None and not is_current(table, expected_version):
                        raise VersionMismatch(table_id, expected_version, table.version)
                events = decide_on(table)
            except Exception:  # refused: a retry of a command that ran, or a stale cache?
                earlier = self._store.command_result(command_id, stream_id(table_id))
                if earlier is not None:
                    if not digest:  # bind it where it first ran, to know what it stood for
                        self._bind_before(table_id, earlier, bound_on, command_id)
                    return self._earlier_outcome(table_id, command_id, earlier, digested)
                fresh = self._reload(table_id)
                if fresh.version == table.version:
                    raise
                table = fresh
                if expected_version is not None and not is_current(table, expected_version):
                    raise VersionMismatch(table_id, expected_version, table.version) from None
                at = self._now(table_id)
                events = decide_on(table)
            if not events:  # nothing changes (a presence the table counts already)
                return Outcome(table.version, 0)
            try:
                result = self._commit(table, events, command_id, acting, digest, at)
            except ConcurrencyConflict:
                # Another replica wrote first: catch up and decide again, once.
                table = self._reload(table_id)
                if expected_version is not None and not is_current(table, expected_version):
                    raise VersionMismatch(table_id, expected_version, table.version) from None
                at = self._now(table_id)
                events = decide_on(table)
                if not events:
                    return Outcome(table.version, 0)
                result = self._commit(table, events, command_id, acting, digest, at)
            if result.first_version != table.version + 1:
                return self._earlier_outcome(table_id, command_id, result, digested)
            stopped_at, unfinished = self._follow_up_committed(
                table_id, command_id, until_dealer=until_dealer
            )
            return Outcome(
                self._tables[table_id].version,
                len(result.versions),
                tuple(committed),
                pending=None
                if stopped_at is None
                else PendingDealerStep(table_id, command_id, stopped_at),
                unfinished=unfinished,
            )

    # -- the table's own commands, each decided as any other ------------------------
    def append_reaction(
        self,
        table_id: str,
        seat: int,
        reaction: str,
        command_id: str,
        actor: str,
        expected_version: int | None = None,
    ) -> Outcome:
        """Show a reaction from an occupied seat (a ``ReactionShown`` event)."""
        return self.decide_and_append(
            table_id, React(seat, reaction), command_id, actor, expected_version=expected_version
        )

    def set_presence(
        self,
        table_id: str,
        report: SeatPresence,
        command_id: str,
        actor: str,
        authorize: Callable[[Table], object] | None = None,
    ) -> Outcome:
        """A gateway replica reports a seat's person connected or not (a ``SeatPresence``
        event; nothing when the table already counts it so)."""
        command = SetPresence(report.seat, report.connected, report.gateway)
        return self.decide_and_append(table_id, command, command_id, actor, authorize=authorize)

    def hand_over_host(
        self,
        table_id: str,
        seat: int,
        command_id: str,
        actor: str,
        authorize: Callable[[Table], object] | None = None,
    ) -> Outcome:
        """The host hands the host role to the human in ``seat`` (a ``HostChanged`` event)."""
        return self.decide_and_append(
            table_id, HandOverHost(seat), command_id, actor, authorize=authorize
        )

    def move_on(
        self,
        table_id: str,
        kind: str,
        game_no: int,
        round_no: int,
        command_id: str,
        timer_key: int = 0,
    ) -> Outcome:
        """The table waited too long (``kind``) in ``game_no``, ``round_no``: it moves on by
        itself (:func:`president.hosting.move_on.move_on`), closes when nobody is left, or,
        in rapid play, lets its next bot move (on table version ``timer_key``). STALE when
        it moved on meanwhile (a repeated MoveOn too)."""
        command = MoveOn(kind, game_no, round_no, timer_key)
        return self.decide_and_append(table_id, command, command_id, SERVER)

    def _bind_before(
        self,
        table_id: str,
        earlier: AppendResult,
        bound_on: Callable[[Table], object],
        command_id: str,
    ) -> None:
        """Bind a retried command on the table as it stood when its id first ran (a command
        that names no seat is known only there: its cards left the hand since);
        CommandConflict when it could not have been that command."""
        stored = self._store.read_stream(stream_id(table_id), 1, earlier.first_version - 1)
        before = fold_stored(None, stored)
        assert before is not None
        try:
            bound_on(before)
        except Exception:
            raise CommandConflict(command_id) from None

    def _earlier_outcome(
        self,
        table_id: str,
        command_id: str,
        earlier: AppendResult,
        digested: tuple[TableCommand, str] | None,
    ) -> Outcome:
        """The outcome a command that already ran had, for its retry (CommandConflict when
        the id ran for another command: its kept digest, of either format, is not that of
        ``digested``, the command as bound and who acts it)."""
        digests: tuple[str, ...] = ()
        if digested is not None:
            command, acting = digested
            digests = (digest_of(command, acting), legacy_digest_of(command, acting))
        check_same(self._store, earlier, command_id, digests)
        self.load(table_id)
        return Outcome(self._settled_version(table_id, command_id, earlier), len(earlier.versions))

    def settle(self, table_id: str) -> int:
        """Finish what a command left undone (a crash, a dealer that did not answer).

        Deals, reveals and lets bots move exactly as the interrupted command
        would have; idempotent, and a no-op for a settled table. Returns the
        table's version.
        """
        with self.lock(table_id):
            self.load(table_id)
            return self._settled(table_id).version

    def timeout(self, table_id: str, timer_key: int, game_no: int, round_no: int) -> Outcome:
        """The timer expired on ``timer_key`` of a round; refused as STALE if the table moved on.

        At a table that waits for the server (the ``server`` deadline), the owed
        step is tried again (raising if it fails again, for the timer to retry).
        """
        command_id = f"timeout-{table_id}-{game_no}-{round_no}-{timer_key}"
        with self.lock(table_id):
            table = self.load(table_id)
            if waits_for_server(table):  # the server deadline: try the owed step again
                return Outcome(self._settled(table_id).version, 0)
            game = table.game
        if (
            game.phase != g.GamePhase.ROUND
            or game.round is None
            or game.game_no != game_no
            or game.round_no != round_no
        ):
            earlier = self._store.command_result(command_id, stream_id(table_id))
            if earlier is not None:
                return Outcome(earlier.last_version, len(earlier.versions))
            raise Rejected(ErrorCode.STALE, "that timer belongs to a round that is over")
        return self.decide_and_append(table_id, rnd.Timeout(timer_key), command_id, SERVER)

    # -- internals -----------------------------------------------------------
    @contextmanager
    def _collecting(self, table_id: str) -> Iterator[list[StoredEvent]]:
        """Collect what the appends to ``table_id`` commit meanwhile (hold its lock)."""
        committed: list[StoredEvent] = []
        self._committing[table_id] = committed
        try:
            yield committed
        finally:
            del self._committing[table_id]

    def _settled_version(self, table_id: str, command_id: str, earlier: AppendResult) -> int:
        """The version after a command that ran before and the follow-ups it set off."""
        version = earlier.last_version
        prefix = f"{command_id}/"
        for stored in self._store.read_stream(stream_id(table_id), version + 1):
            if not stored.command_id.startswith(prefix):
                break
            version = stored.version
        return version

    def _commit(
        self,
        table: Table,
        events: Sequence[TableEvent],
        command_id: str,
        actor: str,
        digest: str | None = None,
        at: datetime | None = None,
    ) -> AppendResult:
        """Append ``events`` stored at ``at`` (None: now) and fold them into the table."""
        at = at or self._now(table.table_id)
        result = self._append(table.table_id, table.version, events, command_id, actor, digest, at)
        if result.first_version != table.version + 1:
            self.load(table.table_id)  # a repeated command: catch up with the store
            return result
        for event in events:
            table = fold(table, event, table.version + 1, at)
        self._tables[table.table_id] = table
        return result

    def _append(
        self,
        table_id: str,
        expected: int,
        events: Sequence[TableEvent],
        command_id: str,
        actor: str,
        digest: str | None = None,
        at: datetime | None = None,
    ) -> AppendResult:
        """Append ``events`` in their stored form: the store boundary, where the codec encodes.
        ``digest``: the command's (:mod:`president.hosting.retries`), kept with its events.
        Each event gets a blinding value of its own (:mod:`president.hosting.blinding`).
        ``at``: the time stored with them (None: now)."""
        metadata = {"actor": actor} if digest is None else {"actor": actor, DIGEST: digest}
        blinding = self._blinding
        last = self._stamps.get(table_id)
        result = self._store.append(
            stream_id(table_id),
            expected,
            [
                NewEvent.from_message(codec.encode(event), {**metadata, BLIND: blinding()})
                for event in events
            ],
            command_id,
            time=at or self._now(table_id),
        )
        if result.events:
            stamped = _stamp_of(result.events[-1])
            self._stamps[table_id] = stamped if last is None else max(last, stamped)
        collected = self._committing.get(table_id)
        if collected is not None and result.first_version == expected + 1:
            collected.extend(result.events)
        if self._on_appended is not None:
            self._on_appended(result)
        return result

    def _settled(self, table_id: str) -> Table:
        """The table after what the server owes it (a deal, a reveal, bots' moves), under its
        lock. On a conflict the table is read again and the owed step tried once more: another
        replica wrote, or the store failed over and lost events this copy holds (then the
        table goes on from what the store kept, which may owe nothing)."""
        table = self._tables[table_id]
        try:
            self._follow_up(table_id, f"settle-{table_id}-{table.version}")
        except ConcurrencyConflict:
            table = self._reload(table_id)
            if waits_for_server(table):
                self._follow_up(table_id, f"settle-{table_id}-{table.version}")
        return self._tables[table_id]

    def _follow_up_committed(
        self, table_id: str, command_id: str, *, until_dealer: bool = False, first_step: int = 0
    ) -> tuple[int | None, bool]:
        """:meth:`_follow_up` after a committed command, and whether a follow-up failed.

        The command stands (its result is stored under its id); what failed is
        the server's to finish, so the failure is logged, not raised.
        """
        try:
            stopped_at = self._follow_up(
                table_id, command_id, until_dealer=until_dealer, first_step=first_step
            )
        except Exception as error:
            _log.warning(
                "table %s: %s committed, its follow-up left: %r", table_id, command_id, error
            )
            return None, True
        return stopped_at, False

    def _follow_up(
        self, table_id: str, command_id: str, *, until_dealer: bool = False, first_step: int = 0
    ) -> int | None:
        """Pass on the role of a host who left, deal when the table waits for cards,
        reveal ended rounds, let bots move.

        None once nothing is left to do. With ``until_dealer``, the number of
        the step that needs the dealer, where it stopped: the steps are
        numbered so that going on from there gives each its own command id.
        """
        for step in range(first_step, MAX_FOLLOW_UPS):
            table = self._tables[table_id]
            if table.closed:
                return None
            game = table.game
            next_host = successor(table)
            if next_host is not None:
                self._commit(table, [next_host], f"{command_id}/host-{step}", SERVER)
                continue
            needs_reveal = self._needs_reveal(table)
            if until_dealer and (needs_reveal or game.phase == g.GamePhase.DEALING):
                return step
            if needs_reveal:
                self._reveal(table, f"{command_id}/reveal")
                continue
            if game.phase == g.GamePhase.DEALING:
                self._deal(table, f"{command_id}/deal")
                continue
            if self._bots_wait(game):
                return None
            command = next_bot_command(game)
            if command is None:
                return None
            seat, bot_command = command
            events = g.decide(game, bot_command)
            self._commit(table, events, f"{command_id}/bot-{step}", bot_actor(game, seat))
        raise RuntimeError(f"table {table_id}: bots did not settle")  # pragma: no cover

    def _bots_wait(self, game: g.GameState) -> bool:
        """Whether the bots wait for the timer (rapid play with a delay, turn play with a
        pace), not moving now."""
        state = game.round
        return (
            self._rapid_bots_wait
            and state is not None
            and bots_wait(game)
            and state.phase == rnd.RoundPhase.PLAY
        )

    @staticmethod
    def _needs_reveal(table: Table) -> bool:
        return needs_reveal(table)

    def _reveal(self, table: Table, command_id: str) -> None:
        commitment = table.commitment
        assert commitment is not None
        key = RoundKey(table.table_id, commitment.game_no, commitment.round_no)
        revealed: DealRevealed | DealSecretLost
        try:
            secret = self._dealer.reveal(key)
        except SecretLost:
            # The dealer's store lost it: recorded, and the game goes on (an audit finding).
            revealed = DealSecretLost(
                commitment.game_no, commitment.round_no, commitment.fingerprint
            )
        else:
            revealed = DealRevealed(
                game_no=commitment.game_no, round_no=commitment.round_no, secret_hex=secret.hex()
            )
        self._commit(table, [revealed], command_id, SERVER)
        self._tables[table.table_id] = replace(self._tables[table.table_id], commitment=None)

    def _deal(self, table: Table, command_id: str) -> None:
        """Commit the next round's deal, then deal it. A dealer that lost the committed round
        before its deal (:class:`SecretLost`: its store failed over without it) has it
        withdrawn, committed afresh and dealt from the new commitment (:meth:`_commit_round`)."""
        game = table.game
        order = g.deal_order(game)
        key = RoundKey(table.table_id, game.game_no, game.round_no + 1)
        self._commit_round(table, key, f"{command_id}/commit")
        try:
            dealt = self._dealer.deal(key)
        except SecretLost:
            self._commit_round(self._tables[table.table_id], key, f"{command_id}/recommit")
            dealt = self._dealer.deal(key)  # lost again: raised, the table waits and retries
        table = self._tables[table.table_id]
        events = g.decide(table.game, deal_command(table.game, order, dealt))
        self._commit(table, events, command_id, SERVER)

    def _commit_round(self, table: Table, key: RoundKey, command_id: str) -> None:
        """Store the round's commitment (``DealCommitted``), unless the table holds it already.

        The dealer's commit is idempotent per round, so another fingerprint for a round the
        table committed means the dealer no longer holds the first one (nothing was dealt
        from it: cards come only after the commitment holds). That commitment is withdrawn
        first, with ``DealSecretLost`` for it, then the new one stored: the rule
        docs/auditing.md states, which the audit reports as the operator's finding.
        """
        game = table.game
        order = g.deal_order(game)
        hand_size = g.hand_size(game)
        fingerprint = self._dealer.commit(key, len(order), game.options.jokers, hand_size)
        standing = table.commitment
        if standing is not None and (standing.game_no, standing.round_no) == (
            key.game_no,
            key.round_no,
        ):
            if standing.fingerprint == fingerprint:
                return  # committed before (a deal left undone): that commitment stands
            withdrawn = DealSecretLost(key.game_no, key.round_no, standing.fingerprint)
            self._commit(table, [withdrawn], f"{command_id}/withdraw", SERVER)
            table = self._tables[table.table_id]
        committed = DealCommitted(
            game_no=key.game_no,
            round_no=key.round_no,
            fingerprint=fingerprint,
            deal_version=DEAL_VERSION,
            deal_order=order,
            players=len(order),
            options=codec.option_texts(game.options),
            jokers=game.options.jokers,
            hand_size=hand_size or 0,
        )
        self._commit(table, [committed], command_id, SERVER)


def new_table_id() -> str:
    """A fresh table id."""
    return uuid.uuid4().hex[:12]


#: What a hosted command answers with is part of this module's surface (it lives in
#: :mod:`president.hosting.outcome`, which :mod:`president.hosting.commands` shares).
__all__ = [
    "MAX_FOLLOW_UPS",
    "SERVER",
    "Commanded",
    "Outcome",
    "PendingDealerStep",
    "TableHost",
    "new_table_id",
]


def _check_rates(table: Table, events: Sequence[TableEvent], at: datetime) -> None:
    """RateExceeded if a reaction (chat message) stored at ``at`` would break its seat's rate
    (:mod:`president.hosting.seat_rates`, the rule the audit holds the log to)."""
    for event in events:
        over = over_rate(event, table.reaction_times, table.chat_times, at)
        if over is not None:
            rate, wait = over
            raise RateExceeded(rate.reason, rate.sentence(wait), wait.total_seconds())


def _stamp_of(stored: StoredEvent) -> datetime:
    """The time a stored event was stamped with."""
    return datetime.fromisoformat(str(stored.metadata["time"]))
