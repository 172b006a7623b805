"""The round runner: the tournament service plays its tournaments' rounds.

Every ``poll_seconds`` it looks at each tournament that is not over and takes
the next step its log calls for, as the server (:data:`SERVER`):

1. At the start time, or once a round is revealed and another remains: a
   fresh secret is drawn and kept (:class:`DrawSecrets`, never in the
   tournament's public stream), and ``StartRound`` commits to its
   fingerprint. Once the last round is revealed: ``FinishTournament``.
2. A committed round is seated as SEAT_DRAW.md draws it from that secret
   (``SeatRound``).
3. Each table of a seated round is opened through the table service under
   :func:`table_id_of` (tournament, round, table): the tournament's preset
   and options, the entrants in their drawn seats, a bot in each empty one,
   and the game started. The server is the table's host.
4. Each open table's log (the tables' own streams, in the same store) is
   read up to its end: a finished first game is the table's result
   (``RecordResult``, places by :func:`game_places`); a game interrupted
   for want of players is settled by the core's rule (``SettleTable``).
   The log is read when the table's JetStream subject brings its game's
   end (:class:`TableEnds`: a nudge, the log stays the truth), and every
   ``recheck_seconds`` in any case (a message missed while NATS or this
   service was away).
5. Once every table of the round has its places: ``RevealRound``.

Every step is decided from the log as it stands, and sent with a command id
fixed by the tournament, the round and the table (:func:`command_id`): a
runner killed between two steps, started again, reads the log and carries on,
and a step sent twice (two runners, a lost answer) is appended once. The
table service's commands are idempotent by their ids the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol

import structlog
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.hosting.projection import Table, fold_stored
from president.hosting.streams import stream_id as table_stream
from president.rules import game as g
from president.rules.levels import BASIC, bot_player_id
from president.servicekit.errors import ServiceError
from president.servicekit.table_client import TableClient
from president.services.tournament.app import Tournaments
from president.services.tournament.draw_secrets import DrawSecrets
from president.store import EventStore
from president.table.v1 import table_pb2 as tpb
from president.tournament.commands import (
    SERVER,
    FinishTournament,
    RecordResult,
    RevealRound,
    SeatRound,
    SettleTable,
    StartRound,
    TournamentCommand,
)
from president.tournament.pairing import drawable, rounds_remain
from president.tournament.port import CommittedDraw, SeatDraw
from president.tournament.state import RoundRecord, Status, Tournament

log = structlog.get_logger(service="tournament")

POLL_SECONDS = 0.5
#: How often an open table's log is read with no word from its subject.
RECHECK_SECONDS = 5.0
#: The table events that end a tournament table's game (or stop it).
ENDING_TYPES = frozenset(
    message.DESCRIPTOR.full_name
    for message in (epb.GameEnded, epb.GameInterrupted, epb.ReturnedToLobby)
)
#: Steps taken on one tournament in one pass (then the others get their turn).
STEPS_PER_PASS = 32
#: Tournament tables are private: only the drawn entrants sit there; the server hosts them.
VISIBILITY = "private"


def table_id_of(tournament_id: str, round_no: int, table: int) -> str:
    """The table service's id of ``table`` (0 first) of round ``round_no``: anyone who knows
    the tournament can find its tables, and a restarted runner opens the same one."""
    digest = hashlib.sha256(f"tournament-table:{tournament_id}:{round_no}:{table}".encode())
    return digest.hexdigest()[:12]


def command_id(tournament_id: str, step: str) -> str:
    """The fixed command id of one runner step (``start-2``, ``result-2-0``, ``finish``...)."""
    return f"tournament-{tournament_id}-run-{step}"


def game_places(scores: tuple[int, ...], standings: tuple[int, ...]) -> tuple[int, ...]:
    """Each seat's place (1 first) in a finished game: the higher total first; equal totals
    in the order the game's last round finished."""
    seats = len(scores)

    def rank(seat: int) -> tuple[int, int]:
        last = standings.index(seat) if seat in standings else seats
        return -scores[seat], last

    places = [0] * seats
    for place, seat in enumerate(sorted(range(seats), key=rank)):
        places[seat] = place + 1
    return tuple(places)


def settlement(table: Table) -> tuple[tuple[int, ...], frozenset[int]]:
    """A stopped table's standing (every seat, best first, by :func:`game_places`) and the
    seats its players left."""
    game = table.game
    places = game_places(game.scores, game.standings)
    standing = tuple(sorted(range(len(places)), key=lambda seat: places[seat]))
    departed = frozenset(i for i, seat in enumerate(game.seats) if not seat.occupied)
    return standing, departed


class TableEnds(Protocol):
    """Word that a followed table's game ended: which tables, and a wake-up for the runner."""

    wake: asyncio.Event

    async def follow(self, table_id: str) -> None:
        """Listen for the end of ``table_id``'s game."""

    async def unfollow(self, table_id: str) -> None:
        """Stop listening to ``table_id``."""

    def ended(self, table_id: str) -> bool:
        """Whether word came that ``table_id``'s game ended (cleared by the asking)."""


class NoTableEnds:
    """No word from anywhere: the runner reads each open table's log every recheck."""

    def __init__(self) -> None:
        self.wake = asyncio.Event()

    async def follow(self, table_id: str) -> None:
        return None

    async def unfollow(self, table_id: str) -> None:
        return None

    def ended(self, table_id: str) -> bool:
        return False


class NatsTableEnds:
    """The tables' JetStream subjects, one plain subscription per followed table (the
    events the outbox relay publishes reach them too); a game's end marks its table."""

    def __init__(
        self, connect: Callable[[], Awaitable[Client]], subject: Callable[[str], str]
    ) -> None:
        self.wake = asyncio.Event()
        self._connect = connect
        self._subject = subject
        self._client: Client | None = None
        self._subscriptions: dict[str, Subscription] = {}
        self._ended: set[str] = set()

    async def follow(self, table_id: str) -> None:
        if table_id in self._subscriptions:
            return
        if self._client is None:
            self._client = await self._connect()

        async def heard(message: Msg) -> None:
            try:
                event_type = epb.EventEnvelope.FromString(message.data).type
            except Exception:  # not an envelope: nothing to say
                return
            if event_type in ENDING_TYPES:
                self._ended.add(table_id)
                self.wake.set()

        subject = self._subject(table_id)
        self._subscriptions[table_id] = await self._client.subscribe(subject, cb=heard)

    async def unfollow(self, table_id: str) -> None:
        subscription = self._subscriptions.pop(table_id, None)
        self._ended.discard(table_id)
        if subscription is not None:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()

    def ended(self, table_id: str) -> bool:
        if table_id in self._ended:
            self._ended.discard(table_id)
            return True
        return False

    async def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.close()


class RoundRunner:
    """Runs every tournament's rounds from its log; see the module's docstring."""

    def __init__(
        self,
        tournaments: Tournaments,
        secrets: DrawSecrets,
        tables: TableClient,
        events: EventStore,
        now: Callable[[], datetime],
        *,
        draw: SeatDraw | None = None,
        ends: TableEnds | None = None,
        poll_seconds: float = POLL_SECONDS,
        recheck_seconds: float = RECHECK_SECONDS,
    ) -> None:
        self._tournaments = tournaments
        self._secrets = secrets
        self._tables = tables
        self._events = events
        self._now = now
        self._draw = draw or CommittedDraw()
        self._ends = ends or NoTableEnds()
        self._poll = poll_seconds
        self._recheck = recheck_seconds
        #: When each open table's log was last read (monotonic seconds).
        self._read_at: dict[str, float] = {}
        #: Tables this process opened (a restarted one opens them again: idempotent).
        self._opened: set[str] = set()
        #: Each followed table as its log made it so far.
        self._followed: dict[str, Table] = {}

    async def run(self) -> None:
        """Pass over the tournaments until cancelled."""
        while True:
            try:
                await self.run_once()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # a store or table service away: next pass
                log.warning("round runner pass failed", error=repr(error))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ends.wake.wait(), self._poll)
            self._ends.wake.clear()

    async def run_once(self) -> None:
        """One pass: every tournament not over taken as far as its log allows now. A step
        that fails (a refusal, the table service away, a round without its kept secret)
        leaves its tournament for the next pass, not the others."""
        for tournament_id in await asyncio.to_thread(self._tournaments.unfinished):
            try:
                for _ in range(STEPS_PER_PASS):
                    if not await self.step(tournament_id):
                        break
            except asyncio.CancelledError:
                raise
            except Exception as error:  # this tournament waits; the others go on
                log.warning("round runner step failed", tournament=tournament_id, error=repr(error))

    async def step(self, tournament_id: str) -> bool:
        """Take the tournament's next step; whether one was taken (False: wait)."""
        state = (await asyncio.to_thread(self._tournaments.get, tournament_id)).tournament
        if state.over:
            return False
        if not state.rounds:
            if state.status != Status.ENTRY or self._now() < state.settings.starts_at:
                return False
            if len(drawable(state)) < 2:
                return False  # the core would refuse: wait for entrants (or the host)
            return await self._start(state, 1)
        record = state.rounds[-1]
        if record.secret is not None:
            if rounds_remain(state):
                return await self._start(state, record.round_no + 1)
            return await self._send(state, FinishTournament(SERVER), "finish")
        if record.seating is None:
            return await self._seat(state, record)
        if record.scored:
            return await self._reveal(state, record)
        return await self._follow(state, record)

    async def _send(self, state: Tournament, command: TournamentCommand, step: str) -> bool:
        await asyncio.to_thread(
            self._tournaments.run_server,
            state.tournament_id,
            command,
            command_id(state.tournament_id, step),
        )
        return True

    async def _start(self, state: Tournament, round_no: int) -> bool:
        drawn = await asyncio.to_thread(self._secrets.commit, state.tournament_id, round_no)
        command = StartRound(SERVER, round_no, drawn.fingerprint)
        return await self._send(state, command, f"start-{round_no}")

    async def _kept_secret(self, state: Tournament, record: RoundRecord) -> bytes:
        kept = await asyncio.to_thread(self._secrets.get, state.tournament_id, record.round_no)
        if kept is None or kept.fingerprint != record.fingerprint:
            raise RuntimeError(
                f"round {record.round_no} of tournament {state.tournament_id} has no kept secret "
                "for its fingerprint"
            )
        return kept.secret

    async def _seat(self, state: Tournament, record: RoundRecord) -> bool:
        secret = await self._kept_secret(state, record)
        seating = self._draw.draw(secret, record.request)
        command = SeatRound(SERVER, record.round_no, seating)
        return await self._send(state, command, f"seat-{record.round_no}")

    async def _reveal(self, state: Tournament, record: RoundRecord) -> bool:
        secret = await self._kept_secret(state, record)
        command = RevealRound(SERVER, record.round_no, secret)
        return await self._send(state, command, f"reveal-{record.round_no}")

    async def _follow(self, state: Tournament, record: RoundRecord) -> bool:
        """Open the round's tables not yet opened; record the first finished one."""
        assert record.seating is not None
        for table_no, (seats, places) in enumerate(zip(record.seating, record.places, strict=True)):
            if places is not None:
                continue
            table_id = table_id_of(state.tournament_id, record.round_no, table_no)
            if table_id not in self._opened:
                await self._listen(table_id)
                await self._open(state, table_id, seats)
                self._opened.add(table_id)
            if not self._due(table_id):
                continue
            table = await asyncio.to_thread(self._read_table, table_id)
            if table is None:
                continue
            game = table.game
            step = f"{record.round_no}-{table_no}"
            if game.game_no >= 1 and game.phase == g.GamePhase.GAME_OVER:
                await self._forget(table_id)
                places_now = game_places(game.scores, game.standings)
                command: TournamentCommand = RecordResult(
                    SERVER, record.round_no, table_no, places_now
                )
                return await self._send(state, command, f"result-{step}")
            if game.game_no >= 1 and game.phase == g.GamePhase.LOBBY:
                await self._forget(table_id)
                standing, departed = settlement(table)
                command = SettleTable(SERVER, record.round_no, table_no, standing, departed)
                return await self._send(state, command, f"settle-{step}")
        return False

    async def _forget(self, table_id: str) -> None:
        """A table with its result is followed no more (its step may still be sent again)."""
        await self._ends.unfollow(table_id)
        self._followed.pop(table_id, None)
        self._read_at.pop(table_id, None)

    async def _listen(self, table_id: str) -> None:
        try:
            await self._ends.follow(table_id)
        except Exception as error:  # NATS away: the recheck reads the log anyway
            log.warning("cannot follow a table's subject", table=table_id, error=repr(error))

    def _due(self, table_id: str) -> bool:
        """Whether to read the table's log now: word came that its game ended, or it was
        not read for ``recheck_seconds`` (or never, by this process)."""
        now = time.monotonic()
        ended = self._ends.ended(table_id)
        if not ended and now - self._read_at.get(table_id, float("-inf")) < self._recheck:
            return False
        self._read_at[table_id] = now
        return True

    async def _open(self, state: Tournament, table_id: str, seats: tuple[str | None, ...]) -> None:
        """Create the table, seat the drawn entrants and the bots, start the game: each with a
        fixed command id, so opening it again changes nothing."""
        settings = state.settings
        try:
            await self._tables.create_table(
                tpb.CreateTableRequest(
                    table_id=table_id,
                    options=gpb.TableOptions(
                        preset=settings.preset, options=dict(settings.options)
                    ),
                    seat_count=len(seats),
                    visibility=VISIBILITY,
                    host_player_id=SERVER,
                    command_id=f"create-{table_id}",
                    name=settings.name[:40],
                )
            )
        except ServiceError as error:
            if error.reason != "TABLE_EXISTS":
                raise
        for seat, account in enumerate(seats):
            player = account if account is not None else bot_player_id(BASIC, str(seat))
            name = f"Player {seat + 1}" if account is not None else f"Bot {seat + 1}"
            sit = gpb.SitDown(
                seat=seat, player_id=player, display_name=name, is_bot=account is None
            )
            await self._server_command(table_id, f"sit-{seat}", gpb.Command(sit_down=sit))
        await self._server_command(table_id, "start", gpb.Command(start_game=gpb.StartGame()))

    async def _server_command(self, table_id: str, step: str, command: gpb.Command) -> None:
        await self._tables.submit(
            tpb.ExecuteCommandRequest(
                table_id=table_id,
                command_id=f"tournament-{step}-{table_id}",
                actor=gpb.Actor(player_id=SERVER),
                command=command,
            )
        )

    def _read_table(self, table_id: str) -> Table | None:
        """The table as its log stands now (only the events not read before are read)."""
        known = self._followed.get(table_id)
        after = known.version if known is not None else 0
        stored = self._events.read_stream(table_stream(table_id), from_version=after + 1)
        if not stored:
            return known
        table = fold_stored(known, stored)
        if table is not None:
            self._followed[table_id] = table
        return table
