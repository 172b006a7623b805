"""The table application service: commands in, events appended to the store.

For each command, :class:`TableHost` loads the table (from memory, or by
replaying its stream), asks the rules engine, and appends the resulting
events with the expected version and the command id. Around each round it
runs the committed deal through a :class:`DealerPort`: ``DealCommitted``
(the fingerprint) before the cards, ``DealRevealed`` (the secret) after the
round's end. Bots and stand-ins for players who left act as their own
commands right after the command that gave them the turn.

It does no networking itself: the table service wraps it in gRPC, the
``president play --db`` command and the tests use it directly.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Protocol

from google.protobuf.message import Message

from president import codec
from president.deal import DEAL_VERSION, new_secret, seated
from president.deal import deal as committed_deal
from president.deal import fingerprint as deal_fingerprint
from president.events.v1 import events_pb2 as pb
from president.rules import bots
from president.rules import game as g
from president.rules import round as rnd
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import Options
from president.store import AppendResult, ConcurrencyConflict, EventStore, NewEvent, StoredEvent

SERVER = "server"
STREAM_PREFIX = "table-"
MAX_FOLLOW_UPS = 2_000


def stream_id(table_id: str) -> str:
    """The event stream of a table."""
    return f"{STREAM_PREFIX}{table_id}"


def table_id_of(stream: str) -> str:
    """The table id of a table's event stream: the inverse of :func:`stream_id`.

    A stream name without the table prefix is returned as it is.
    """
    return stream.removeprefix(STREAM_PREFIX)


@dataclass(frozen=True)
class RoundKey:
    """Which round of which table a deal is for."""

    table_id: str
    game_no: int
    round_no: int


@dataclass(frozen=True)
class DealtCards:
    """A deal: hands by position in the deal order (each in dealt order), and set-aside cards."""

    hands: tuple[tuple[int, ...], ...]
    set_aside: tuple[int, ...]


class DealerPort(Protocol):
    """The committed deal, as the table sees the dealer."""

    def commit(self, key: RoundKey, players: int, jokers: bool, hand_size: int | None) -> str:
        """Draw the round's secret; return its fingerprint. Idempotent per round."""

    def deal(self, key: RoundKey) -> DealtCards:
        """Deal the committed round."""

    def reveal(self, key: RoundKey) -> bytes:
        """The round's secret, once it has ended."""


@dataclass
class LocalDealer:
    """An in-process dealer: secrets in memory. For local games and tests."""

    secret_for: Callable[[RoundKey], bytes] = field(default=lambda _key: new_secret())
    _rounds: dict[RoundKey, tuple[bytes, int, bool, int | None]] = field(default_factory=dict)

    def commit(self, key: RoundKey, players: int, jokers: bool, hand_size: int | None) -> str:
        if key not in self._rounds:
            self._rounds[key] = (self.secret_for(key), players, jokers, hand_size)
        return deal_fingerprint(self._rounds[key][0])

    def deal(self, key: RoundKey) -> DealtCards:
        secret, players, jokers, hand_size = self._rounds[key]
        dealt = committed_deal(secret, range(players), jokers=jokers, hand_size=hand_size)
        return DealtCards(dealt.hands, dealt.set_aside)

    def reveal(self, key: RoundKey) -> bytes:
        return self._rounds[key][0]


@dataclass(frozen=True)
class Table:
    """A table as loaded: the engine's state, the stream version and the table's settings."""

    table_id: str
    game: g.GameState
    version: int
    visibility: str = "practice"
    host_player_id: str = ""
    commitment: pb.DealCommitted | None = None


class TableNotFound(LookupError):
    """No table has this id."""


class TableExists(LookupError):
    """A table with this id exists already."""


class VersionMismatch(Exception):
    """The command named a table version the table is no longer (or not yet) at."""

    def __init__(self, table_id: str, expected: int, actual: int) -> None:
        super().__init__(
            f"table {table_id} is at version {actual}, not {expected}: "
            "reload the table and decide again"
        )
        self.table_id = table_id
        self.expected = expected
        self.actual = actual


@dataclass(frozen=True)
class Outcome:
    """What a command did: the table's version after it and its follow-ups."""

    version: int
    events: int
    #: Every event the command and its follow-ups committed, in version order
    #: (empty for a command id that ran before: it committed nothing now). Not
    #: compared: a retry has the first run's outcome.
    committed: tuple[StoredEvent, ...] = field(default=(), compare=False)
    #: Set when the command ran with ``call_dealer=False`` and its follow-ups
    #: stopped before a step that needs the dealer: the number of that step,
    #: where :meth:`TableHost.finish` goes on. None: nothing is left to do.
    stopped_at: int | None = None

    @property
    def settled(self) -> bool:
        """Nothing of the command is left to do."""
        return self.stopped_at is None


def fold(table: Table, event: g.GameEvent | Message, version: int) -> Table:
    """A table after one more stored event."""
    if isinstance(event, pb.DealCommitted):
        return replace(table, version=version, commitment=event)
    if isinstance(event, pb.DealRevealed):
        return replace(table, version=version, commitment=None)
    if isinstance(event, Message):
        return replace(table, version=version)
    return replace(table, game=g.evolve(table.game, event), version=version)


def fold_stored(table: Table | None, stored: Iterable[StoredEvent]) -> Table | None:
    """``table`` after more stored events of its stream, in order (None: before its first).

    A stream begins with ``TableCreated``; ValueError if it does not.
    """
    for event in stored:
        table = fold_next(table, codec.decode(event.type, event.payload), event)
    return table


def fold_next(
    table: Table | None, event: g.GameEvent | Message, stored: StoredEvent | pb.EventEnvelope
) -> Table:
    """``table`` after the next event of its stream, decoded from ``stored`` (None: before
    the first, which must be ``TableCreated``; ValueError if it is not)."""
    if table is None:
        if not isinstance(event, pb.TableCreated):
            raise ValueError(f"stream {stored.stream_id} does not begin with TableCreated")
        return table_from_created(event)
    return fold(table, event, stored.version)


def table_from_created(created: pb.TableCreated) -> Table:
    """The empty table a ``TableCreated`` event describes."""
    options = codec.options_from_map(created.preset, created.options)
    return Table(
        table_id=created.table_id,
        game=g.new_table(options, created.seat_count),
        version=1,
        visibility=created.visibility,
        host_player_id=created.host_player_id,
    )


class TableHost:
    """Hosts tables: loads them, runs commands through the engine, appends the events."""

    def __init__(
        self,
        store: EventStore,
        dealer: DealerPort,
        *,
        on_appended: Callable[[AppendResult], None] | None = None,
    ) -> None:
        self._store = store
        self._dealer = dealer
        self._tables: dict[str, Table] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        # Table id -> when a command last took its lock (time.monotonic()).
        self._last_used: dict[str, float] = {}
        self._on_appended = on_appended
        # Table id -> the events committed by the command running on it (under its lock).
        self._committing: dict[str, list[StoredEvent]] = {}

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
        dropped: list[str] = []
        with self._locks_guard:
            for table_id, used in list(self._last_used.items()):
                if used > cutoff:
                    continue
                lock = self._locks.get(table_id)
                if lock is not None and not lock.acquire(blocking=False):
                    continue
                self._tables.pop(table_id, None)
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
        return table

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
    ) -> Table:
        """Create a table in the lobby (idempotent for the same command id)."""
        empty = g.new_table(options, seat_count)
        created = pb.TableCreated(
            table_id=table_id,
            preset=options.preset,
            options=codec.options_to_map(options),
            host_player_id=host_player_id,
            visibility=visibility,
            seat_count=len(empty.seats),
        )
        command_id = command_id or f"create-{table_id}"
        with self.lock(table_id):
            try:
                self._append(table_id, 0, [created], command_id, actor)
            except ConcurrencyConflict:
                raise TableExists(f"a table {table_id!r} exists already") from None
            return self.load(table_id)

    def execute(
        self,
        table_id: str,
        command: g.GameCommand | rnd.Command,
        command_id: str,
        actor: str,
        *,
        expected_version: int | None = None,
        authorize: Callable[[Table], None] | None = None,
        call_dealer: bool = True,
    ) -> Outcome:
        """Run a command and what follows from it (deal, reveal, bot moves).

        A command id that ran before returns its first outcome and runs
        nothing. With ``expected_version``, the command runs only if the table
        is at that version (else :class:`VersionMismatch`). ``authorize`` is
        called with the very table the engine decides on (raising refuses the
        command), so a check of who may act never sees an older table.

        With ``call_dealer=False`` the follow-ups stop before a step that
        needs the dealer (a network call): the outcome is then not
        ``settled``, and :meth:`finish` does the rest, as this call would have.
        """

        def decide_on(table: Table) -> list[g.GameEvent]:
            if authorize is not None:
                authorize(table)
            return g.decide(table.game, command)

        with self.lock(table_id), self._collecting(table_id) as committed:
            # Optimistic: decide on the cached table. The append's expected
            # version catches a cache another replica made stale, and its
            # command id catches a retry; the store is read again only when
            # the engine refuses or the version does not match.
            table = self._tables.get(table_id) or self.load(table_id)
            try:
                if expected_version is not None and expected_version != table.version:
                    table = self.load(table_id)
                    if expected_version != table.version:
                        raise VersionMismatch(table_id, expected_version, table.version)
                events = decide_on(table)
            except Exception:  # refused: a retry of a command that ran, or a stale cache?
                earlier = self._store.command_result(command_id, stream_id(table_id))
                if earlier is not None:
                    return self._earlier_outcome(table_id, command_id, earlier)
                fresh = self.load(table_id)
                if fresh.version == table.version:
                    raise
                table = fresh
                if expected_version is not None and expected_version != table.version:
                    raise VersionMismatch(table_id, expected_version, table.version) from None
                events = decide_on(table)
            try:
                result = self._commit(table, events, command_id, actor)
            except ConcurrencyConflict:
                # Another replica wrote first: catch up and decide again, once.
                table = self.load(table_id)
                if expected_version is not None and expected_version != table.version:
                    raise VersionMismatch(table_id, expected_version, table.version) from None
                result = self._commit(table, decide_on(table), command_id, actor)
            if result.first_version != table.version + 1:
                return self._earlier_outcome(table_id, command_id, result)
            stopped_at = self._follow_up(table_id, command_id, call_dealer=call_dealer)
            return Outcome(
                self._tables[table_id].version,
                len(result.versions),
                tuple(committed),
                stopped_at=stopped_at,
            )

    def finish(self, table_id: str, command_id: str, started: Outcome) -> Outcome:
        """Finish a command that stopped before the dealer (``call_dealer=False``).

        Its follow-ups run under the same command id as they would have in
        one go; the outcome is the whole command's.
        """
        with self.lock(table_id), self._collecting(table_id) as committed:
            self._follow_up(table_id, command_id, first_step=started.stopped_at or 0)
            return Outcome(
                self._tables[table_id].version,
                started.events,
                (*started.committed, *committed),
            )

    def _earlier_outcome(self, table_id: str, command_id: str, earlier: AppendResult) -> Outcome:
        """The outcome a command that already ran had, for its retry."""
        self.load(table_id)
        return Outcome(self._settled_version(table_id, command_id, earlier), len(earlier.versions))

    def settle(self, table_id: str) -> int:
        """Finish what a command left undone (a crash, a dealer that did not answer).

        Deals, reveals and lets bots move exactly as the interrupted command
        would have; idempotent, and a no-op for a settled table. Returns the
        table's version.
        """
        with self.lock(table_id):
            table = self.load(table_id)
            self._follow_up(table_id, f"settle-{table_id}-{table.version}")
            return self._tables[table_id].version

    def react(
        self, table_id: str, seat: int, reaction: str, command_id: str, actor: str
    ) -> Outcome:
        """Show a reaction from an occupied seat (a ``ReactionShown`` event)."""
        with self.lock(table_id), self._collecting(table_id) as committed:
            earlier = self._store.command_result(command_id, stream_id(table_id))
            if earlier is not None:
                self.load(table_id)
                return Outcome(earlier.last_version, len(earlier.versions))
            table = self.load(table_id)
            seats = table.game.seats
            if not 0 <= seat < len(seats) or not seats[seat].occupied:
                raise Rejected(ErrorCode.NO_SUCH_SEAT, f"nobody sits in seat {seat}")
            shown = pb.ReactionShown(seat=seat, reaction=reaction)
            result = self._commit(table, [shown], command_id, actor)
            return Outcome(result.last_version, len(result.versions), tuple(committed))

    def timeout(self, table_id: str, timer_key: int, game_no: int, round_no: int) -> Outcome:
        """The timer expired on ``timer_key`` of a round; refused as STALE if the table moved on."""
        command_id = f"timeout-{table_id}-{game_no}-{round_no}-{timer_key}"
        with self.lock(table_id):
            game = self.load(table_id).game
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
        return self.execute(table_id, rnd.Timeout(timer_key), command_id, SERVER)

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
        events: Sequence[g.GameEvent | Message],
        command_id: str,
        actor: str,
    ) -> AppendResult:
        messages = [
            event if isinstance(event, Message) else codec.encode(event) for event in events
        ]
        result = self._append(table.table_id, table.version, messages, command_id, actor)
        if result.first_version != table.version + 1:
            self.load(table.table_id)  # a repeated command: catch up with the store
            return result
        for event in events:
            table = fold(table, event, table.version + 1)
        self._tables[table.table_id] = table
        return result

    def _append(
        self,
        table_id: str,
        expected: int,
        messages: Sequence[Message],
        command_id: str,
        actor: str,
    ) -> AppendResult:
        result = self._store.append(
            stream_id(table_id),
            expected,
            [NewEvent.from_message(message, {"actor": actor}) for message in messages],
            command_id,
        )
        collected = self._committing.get(table_id)
        if collected is not None and result.first_version == expected + 1:
            collected.extend(result.events)
        if self._on_appended is not None:
            self._on_appended(result)
        return result

    def _follow_up(
        self, table_id: str, command_id: str, *, call_dealer: bool = True, first_step: int = 0
    ) -> int | None:
        """Deal when the table waits for cards, reveal ended rounds, let bots move.

        None once nothing is left to do. With ``call_dealer`` off, the number
        of the step that needs the dealer, where it stopped: the steps are
        numbered so that going on from there gives each its own command id.
        """
        for step in range(first_step, MAX_FOLLOW_UPS):
            table = self._tables[table_id]
            game = table.game
            needs_reveal = self._needs_reveal(table)
            if (needs_reveal or game.phase == g.GamePhase.DEALING) and not call_dealer:
                return step
            if needs_reveal:
                self._reveal(table, f"{command_id}/reveal")
                continue
            if game.phase == g.GamePhase.DEALING:
                self._deal(table, f"{command_id}/deal")
                continue
            command = next_bot_command(game)
            if command is None:
                return None
            seat, bot_command = command
            events = g.decide(game, bot_command)
            self._commit(table, events, f"{command_id}/bot-{step}", f"bot:{seat}")
        raise RuntimeError(f"table {table_id}: bots did not settle")  # pragma: no cover

    @staticmethod
    def _needs_reveal(table: Table) -> bool:
        state = table.game.round
        return (
            table.commitment is not None
            and state is not None
            and state.phase == rnd.RoundPhase.OVER
            and state.round_no == table.commitment.round_no
        )

    def _reveal(self, table: Table, command_id: str) -> None:
        commitment = table.commitment
        assert commitment is not None
        key = RoundKey(table.table_id, commitment.game_no, commitment.round_no)
        secret = self._dealer.reveal(key)
        revealed = pb.DealRevealed(
            game_no=commitment.game_no, round_no=commitment.round_no, secret_hex=secret.hex()
        )
        self._commit(table, [revealed], command_id, SERVER)
        self._tables[table.table_id] = replace(self._tables[table.table_id], commitment=None)

    def _deal(self, table: Table, command_id: str) -> None:
        game = table.game
        order = g.deal_order(game)
        hand_size = g.hand_size(game)
        key = RoundKey(table.table_id, game.game_no, game.round_no + 1)
        committed = pb.DealCommitted(
            game_no=key.game_no,
            round_no=key.round_no,
            fingerprint=self._dealer.commit(key, len(order), game.options.jokers, hand_size),
            deal_version=DEAL_VERSION,
            deal_order=order,
            players=len(order),
            options=codec.options_to_map(game.options),
            jokers=game.options.jokers,
            hand_size=hand_size or 0,
        )
        self._commit(table, [committed], f"{command_id}/commit", SERVER)
        dealt = self._dealer.deal(key)
        table = self._tables[table.table_id]
        events = g.decide(table.game, deal_command(table.game, order, dealt))
        self._commit(table, events, command_id, SERVER)


def deal_command(game: g.GameState, order: Sequence[int], dealt: DealtCards) -> g.DealRound:
    """The engine's ``DealRound`` for hands dealt by position in ``order``."""
    by_seat = seated(dealt.hands, dealt.set_aside, order)
    return g.DealRound(by_seat.masks(len(game.seats)), by_seat.set_aside_mask)


def next_bot_command(game: g.GameState) -> tuple[int, rnd.Command] | None:
    """The next move a bot (or a stand-in for a player who left) makes, if any."""
    state = game.round
    if game.phase != g.GamePhase.ROUND or state is None:
        return None
    bot_seats = g.bot_seats(game)
    if not bot_seats:
        return None
    if state.phase == rnd.RoundPhase.EXCHANGE:
        for owed in state.pending:
            if owed.giver in bot_seats:
                cards = bots.choose_return(state, owed.giver, owed.size)
                return owed.giver, rnd.ReturnCards(owed.giver, cards)
        return None
    if not state.options.rapid:
        if state.to_act in bot_seats:
            command = bots.choose_action(state, state.to_act)
            return (state.to_act, command) if command is not None else None
        return None
    for seat in bot_seats:
        command = bots.choose_action(state, seat)
        if command is not None:
            return seat, command
    return None


def new_table_id() -> str:
    """A fresh table id."""
    return uuid.uuid4().hex[:12]


__all__ = [
    "DealerPort",
    "DealtCards",
    "LocalDealer",
    "Outcome",
    "RoundKey",
    "Table",
    "TableExists",
    "TableHost",
    "TableNotFound",
    "VersionMismatch",
    "deal_command",
    "new_table_id",
    "next_bot_command",
    "stream_id",
    "table_id_of",
]
