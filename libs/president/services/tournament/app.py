"""The tournament service's use cases: each command decided by the core, its events appended.

A tournament is the events of its own stream, ``tournament-<id>``, in the
same event store as the tables. A command reads the stream (what this
process has not folded yet), decides with the core
(:func:`president.tournament.decide.decide`) at the service clock's ``now``,
and appends the events at the version it read, stamped with that ``now``:
another writer in between (a second replica, the round runner) is a
conflict, and the command is decided again on what it wrote. Within one
process the commands on a tournament take turns. A refusal
(:class:`~president.tournament.errors.TournamentRefused`) appends nothing.

The list of tournaments is the stream of their ``TournamentCreated`` events
in the global order (:meth:`~president.store.log.LogRecorder.read_all_of_type`),
newest first.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from president import tournament_codec as codec
from president.servicekit.errors import Code, ServiceError
from president.store import ConcurrencyConflict, EventStore, NewEvent, Position
from president.tournament.commands import (
    CancelTournament,
    CreateTournament,
    Enter,
    Invite,
    TournamentCommand,
    TournamentSettings,
    Withdraw,
)
from president.tournament.decide import decide
from president.tournament.errors import Refusal, TournamentRefused
from president.tournament.events import TournamentCreated
from president.tournament.state import Tournament, evolve

#: Every tournament's stream is named this prefix and the tournament id.
STREAM_PREFIX = "tournament-"
#: How many times a command is decided again after another process's append.
CONFLICT_RETRIES = 10
DEFAULT_PAGE = 50
MAX_PAGE = 200
_CREATED = codec.type_name(TournamentCreated)


def stream_id(tournament_id: str) -> str:
    """The event stream of a tournament."""
    return f"{STREAM_PREFIX}{tournament_id}"


@dataclass(frozen=True)
class Folded:
    """A tournament as its stream's first ``version`` events made it."""

    tournament: Tournament
    version: int


@dataclass(frozen=True)
class Page:
    """A page of tournaments, newest first, and where the next one starts ("" for none)."""

    tournaments: tuple[Folded, ...]
    next_token: str


def may_see(tournament: Tournament, actor: str) -> bool:
    """Whether ``actor`` sees the tournament listed: public ones to all, invite-only ones
    to their host and the accounts invited or entered."""
    if tournament.settings.public:
        return True
    return (
        actor == tournament.host
        or actor in tournament.invited
        or tournament.entrant(actor) is not None
    )


class Tournaments:
    """Create, list, read, enter, withdraw, invite and call off, on the event store."""

    def __init__(
        self,
        store: EventStore,
        now: Callable[[], datetime],
        new_id: Callable[[], str] = lambda: "t" + secrets.token_hex(8),
    ) -> None:
        self._store = store
        self._now = now
        self._new_id = new_id
        self._lock = threading.Lock()
        self._folded: dict[str, Folded] = {}
        #: One writer at a time per tournament in this process (others conflict, and retry).
        self._writing: dict[str, threading.Lock] = {}
        #: Tournament ids in the order they were created, and where the catalog has read to.
        self._created: list[tuple[Position, str]] = []
        self._read_to = Position.START

    # -- commands ------------------------------------------------------------------------
    def create(self, actor: str, settings: TournamentSettings, request_id: str = "") -> Folded:
        """A new tournament hosted by ``actor``. The same ``request_id`` from the same actor
        creates one tournament: sent again, it answers the one created."""
        if request_id:
            tournament_id = "t" + _digest(f"{actor}\n{request_id}")
            command_id = f"tournament-create-{tournament_id}"
        else:
            tournament_id = self._new_id()
            command_id = f"tournament-create-{tournament_id}-{secrets.token_hex(4)}"
        command = CreateTournament(actor, tournament_id, settings)
        if request_id and self._store.command_result(command_id, stream_id(tournament_id)):
            return self.get(tournament_id)
        return self._run(tournament_id, command, command_id)

    def enter(self, tournament_id: str, actor: str, guest: bool, rating_milli: int) -> Folded:
        """``actor`` enters (as a guest or not, with that rating: the edge's word)."""
        return self._run(tournament_id, Enter(actor, guest, rating_milli))

    def withdraw(self, tournament_id: str, actor: str) -> Folded:
        """``actor`` withdraws their entry."""
        return self._run(tournament_id, Withdraw(actor))

    def invite(self, tournament_id: str, actor: str, accounts: Iterable[str]) -> Folded:
        """The host invites ``accounts``."""
        return self._run(tournament_id, Invite(actor, tuple(accounts)))

    def cancel(self, tournament_id: str, actor: str) -> Folded:
        """The host calls the tournament off."""
        return self._run(tournament_id, CancelTournament(actor))

    def run_server(self, tournament_id: str, command: TournamentCommand, command_id: str) -> Folded:
        """A step of the round runner, appended once under its fixed ``command_id``: sent
        again (a restarted runner, a second replica), it answers the tournament as it is."""
        if self._store.command_result(command_id, stream_id(tournament_id)):
            return self.get(tournament_id)
        return self._run(tournament_id, command, command_id)

    def _run(self, tournament_id: str, command: TournamentCommand, command_id: str = "") -> Folded:
        with self._lock:
            writing = self._writing.setdefault(tournament_id, threading.Lock())
        with writing:  # this process's commands on one tournament take turns
            return self._decide_and_append(tournament_id, command, command_id)

    def _decide_and_append(
        self, tournament_id: str, command: TournamentCommand, command_id: str
    ) -> Folded:
        for _ in range(CONFLICT_RETRIES):
            current = self._read(tournament_id)
            now = self._now()
            events = decide(current.tournament if current else None, command, now)
            if not events:
                assert current is not None  # only a command on a tournament decides nothing
                return current
            version = current.version if current else 0
            try:
                self._store.append(
                    stream_id(tournament_id),
                    version,
                    [
                        NewEvent(
                            codec.type_name(event),
                            codec.encode(event),
                            {"actor": _actor_of(command)},
                        )
                        for event in events
                    ],
                    command_id or f"tournament-{tournament_id}-{secrets.token_hex(8)}",
                    time=now,
                )
            except ConcurrencyConflict:
                continue
            folded = self._read(tournament_id)
            assert folded is not None
            return folded
        raise ServiceError(
            Code.ABORTED, "TOURNAMENT_BUSY", "the tournament is changing: send the call again"
        )

    # -- reads -----------------------------------------------------------------------------
    def get(self, tournament_id: str) -> Folded:
        """The tournament as its stream holds it now (NO_SUCH_TOURNAMENT if none)."""
        folded = self._read(tournament_id)
        if folded is None:
            raise TournamentRefused(Refusal.NO_SUCH_TOURNAMENT, "there is no such tournament")
        return folded

    def list(self, actor: str, statuses: frozenset[str], page_size: int, page_token: str) -> Page:
        """A page of the tournaments ``actor`` may see, newest first, in ``statuses`` (empty:
        all); ``page_token`` is the previous page's ``next_token`` ("" for the first)."""
        size = min(page_size or DEFAULT_PAGE, MAX_PAGE)
        before = _parse_token(page_token)
        self._catch_up_catalog()
        with self._lock:
            created = list(self._created)
        candidates = [
            (position, tournament_id)
            for position, tournament_id in reversed(created)
            if before is None or position < before
        ]
        found: list[Folded] = []
        next_token = ""
        for index, (position, tournament_id) in enumerate(candidates):
            folded = self._read(tournament_id)
            if folded is None or not may_see(folded.tournament, actor):
                continue
            if statuses and folded.tournament.status.value not in statuses:
                continue
            found.append(folded)
            if len(found) == size:
                if index + 1 < len(candidates):
                    next_token = str(position)
                break
        return Page(tuple(found), next_token)

    def unfinished(self) -> tuple[str, ...]:
        """The ids of the tournaments not finished nor called off, oldest first."""
        self._catch_up_catalog()
        with self._lock:
            created = [tournament_id for _, tournament_id in self._created]
        folded = [self._read(tournament_id) for tournament_id in created]
        return tuple(f.tournament.tournament_id for f in folded if f and not f.tournament.over)

    def _catch_up_catalog(self) -> None:
        with self._lock:
            after = self._read_to
        stored, newest = self._store.read_all_of_type(after, _CREATED)
        with self._lock:
            if self._read_to != after:
                return  # another call caught up meanwhile
            known = {tournament_id for _, tournament_id in self._created}
            for event in stored:
                tournament_id = event.stream_id.removeprefix(STREAM_PREFIX)
                if event.stream_id.startswith(STREAM_PREFIX) and tournament_id not in known:
                    self._created.append((event.position, tournament_id))
            self._read_to = newest

    def _read(self, tournament_id: str) -> Folded | None:
        """The tournament folded up to its stream's head (only the new events are read)."""
        with self._lock:
            known = self._folded.get(tournament_id)
        after = known.version if known else 0
        stored = self._store.read_stream(stream_id(tournament_id), from_version=after + 1)
        if not stored:
            return known
        state = known.tournament if known else None
        for event in stored:
            state = evolve(state, codec.decode(event.type, event.payload))
        assert state is not None
        folded = Folded(state, stored[-1].version)
        with self._lock:
            held = self._folded.get(tournament_id)
            if held is None or held.version < folded.version:
                self._folded[tournament_id] = folded
        return folded


def _actor_of(command: TournamentCommand) -> str:
    return command.actor


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _parse_token(token: str) -> Position | None:
    if not token:
        return None
    try:
        return Position.parse(token)
    except ValueError:
        raise ServiceError(
            Code.INVALID_ARGUMENT, "INVALID_PAGE_TOKEN", "that page token is not one we gave"
        ) from None
