"""The tournament gRPC servicer: protos in, :class:`Tournaments` (in a worker thread), protos out.

A refusal of the core (:class:`~president.tournament.errors.TournamentRefused`)
becomes its status here, with its stable reason and sentence
(:data:`REFUSAL_STATUS`); a store that cannot be reached is UNAVAILABLE
(STORE_UNAVAILABLE), and the same call may be sent again.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import grpc
import structlog

from president.servicekit.errors import Code, ServiceError, store_unavailable
from president.servicekit.grpc_errors import abort
from president.servicekit.names import shown_name
from president.services.tournament.app import Folded, Tournaments
from president.services.tournament.runner import table_id_of
from president.store import is_transient
from president.tournament.commands import TournamentSettings
from president.tournament.errors import Refusal, TournamentRefused
from president.tournament.standings import standings
from president.tournament.state import Status, Tournament
from president.tournaments.v1 import tournaments_pb2 as pb
from president.tournaments.v1 import tournaments_pb2_grpc

T = TypeVar("T")
Context = grpc.aio.ServicerContext[Any, Any]

#: The status of each refusal of the core; one not named here is FAILED_PRECONDITION
#: (full, closed, not yet open, started, over, not entered...).
REFUSAL_STATUS = {
    Refusal.NO_SUCH_TOURNAMENT: Code.NOT_FOUND,
    Refusal.TOURNAMENT_EXISTS: Code.ALREADY_EXISTS,
    Refusal.ALREADY_ENTERED: Code.ALREADY_EXISTS,
    Refusal.BAD_SETTINGS: Code.INVALID_ARGUMENT,
    Refusal.NOT_HOST: Code.PERMISSION_DENIED,
    Refusal.NOT_SERVER: Code.PERMISSION_DENIED,
    Refusal.NOT_INVITED: Code.PERMISSION_DENIED,
    Refusal.GUESTS_NOT_ALLOWED: Code.PERMISSION_DENIED,
    Refusal.BAD_COMMITMENT: Code.INVALID_ARGUMENT,
    Refusal.BAD_SEATING: Code.INVALID_ARGUMENT,
    Refusal.BAD_RESULT: Code.INVALID_ARGUMENT,
    Refusal.UNKNOWN_TABLE: Code.INVALID_ARGUMENT,
}
#: A tournament id names a stream: letters, digits, '-' and '_', 1 to 64 of them.
_TOURNAMENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: The longest account id an actor or an invitation may name.
MAX_ACCOUNT = 200
MAX_INVITES = 1000
#: A tournament's table options: as many, and as long, as a table's (the gateway's rule).
MAX_OPTIONS = 40
MAX_OPTION_TEXT = 100
STATUSES = frozenset(status.value for status in Status)


def refused(error: TournamentRefused) -> ServiceError:
    """The status, reason and sentence of a refusal of the core."""
    status = REFUSAL_STATUS.get(error.reason, Code.FAILED_PRECONDITION)
    return ServiceError(status, error.reason.value, error.sentence)


def _invalid(reason: str, sentence: str) -> ServiceError:
    return ServiceError(Code.INVALID_ARGUMENT, reason, sentence)


def tournament_id(value: str) -> str:
    """A tournament id that can name a stream (INVALID_TOURNAMENT_ID otherwise)."""
    if not _TOURNAMENT_ID.fullmatch(value):
        raise _invalid(
            "INVALID_TOURNAMENT_ID",
            "a tournament id is 1 to 64 letters, digits, '-' or '_'",
        )
    return value


def actor(value: str) -> str:
    """The account a call acts for (INVALID_ACTOR when none)."""
    if not value or len(value) > MAX_ACCOUNT:
        raise _invalid("INVALID_ACTOR", "a tournament call names the account it acts for")
    return value


def _time(unix_ms: int) -> datetime:
    try:
        return datetime.fromtimestamp(unix_ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        raise TournamentRefused(Refusal.BAD_SETTINGS, f"{unix_ms} is no time") from None


def _unix_ms(value: datetime) -> int:
    return round(value.timestamp() * 1000)


def settings_of(message: pb.TournamentSettings) -> TournamentSettings:
    """The core's settings of the proto's: the name by the rule of shown names
    (INVALID_TOURNAMENT_NAME), the options bounded (INVALID_OPTIONS); the core checks
    the rest (BAD_SETTINGS)."""
    name = shown_name(message.name, reason="INVALID_TOURNAMENT_NAME", what="a tournament name")
    options = message.options
    if len(options) > MAX_OPTIONS or any(
        len(key) > MAX_OPTION_TEXT or len(value) > MAX_OPTION_TEXT for key, value in options.items()
    ):
        raise _invalid(
            "INVALID_OPTIONS",
            f"a tournament takes at most {MAX_OPTIONS} options of {MAX_OPTION_TEXT} characters",
        )
    return TournamentSettings(
        name=name,
        preset=message.preset,
        format=message.format,
        rounds=message.rounds,
        table_size=message.table_size,
        capacity=message.capacity,
        opens_at=_time(message.opens_at_unix_ms),
        closes_at=_time(message.closes_at_unix_ms),
        starts_at=_time(message.starts_at_unix_ms),
        public=not message.invite_only,
        guests_allowed=message.guests_allowed,
        first_draw=message.first_draw or "random",
        options=tuple(sorted(message.options.items())),
    )


def settings_message(settings: TournamentSettings) -> pb.TournamentSettings:
    """The proto of the core's settings."""
    return pb.TournamentSettings(
        name=settings.name,
        preset=settings.preset,
        options=dict(settings.options),
        format=settings.format,
        rounds=settings.rounds,
        table_size=settings.table_size,
        capacity=settings.capacity,
        opens_at_unix_ms=_unix_ms(settings.opens_at),
        closes_at_unix_ms=_unix_ms(settings.closes_at),
        starts_at_unix_ms=_unix_ms(settings.starts_at),
        invite_only=not settings.public,
        guests_allowed=settings.guests_allowed,
        first_draw=settings.first_draw,
    )


def tournament_message(folded: Folded, viewer: str) -> pb.Tournament:
    """A tournament as a proto: the invitations are shown to its host only."""
    state: Tournament = folded.tournament
    rounds = []
    for record in state.rounds:
        tables = [
            pb.RoundTable(
                seats=[account or "" for account in seats],
                places=list(places or ()),
                settled=index in record.settled,
                table_id=table_id_of(state.tournament_id, record.round_no, index),
            )
            for index, (seats, places) in enumerate(
                zip(record.seating or (), record.places, strict=True)
            )
        ]
        rounds.append(
            pb.Round(
                round_no=record.round_no,
                fingerprint=record.fingerprint,
                method=record.request.method,
                tables=tables,
                secret_hex=record.secret.hex() if record.secret is not None else "",
            )
        )
    return pb.Tournament(
        tournament_id=state.tournament_id,
        host=state.host,
        settings=settings_message(state.settings),
        status=state.status.value,
        entrants=[
            pb.Entrant(
                account_id=e.account_id,
                guest=e.guest,
                rating_milli=e.rating_milli,
                retired_from=e.retired_from or 0,
            )
            for e in state.entrants
        ],
        rounds=rounds,
        standings=[
            pb.Standing(
                rank=s.rank,
                account_id=s.account_id,
                points=s.points,
                opponents_points=s.opponents_points,
                place_counts=list(s.place_counts),
                rounds_scored=s.rounds_scored,
                reached=s.reached,
                retired=s.retired,
            )
            for s in standings(state)
        ],
        invited=sorted(state.invited) if viewer == state.host else [],
        version=folded.version,
    )


def summary_message(folded: Folded) -> pb.TournamentSummary:
    """A tournament as a list shows it."""
    state = folded.tournament
    return pb.TournamentSummary(
        tournament_id=state.tournament_id,
        host=state.host,
        settings=settings_message(state.settings),
        status=state.status.value,
        entrants=len(state.entrants),
        rounds_drawn=len(state.rounds),
    )


class TournamentServicer(tournaments_pb2_grpc.TournamentServiceServicer):
    """Tournaments: created, listed, read, entered, withdrawn from, invited to, called off."""

    def __init__(self, tournaments: Tournaments) -> None:
        self._tournaments = tournaments
        self._log = structlog.get_logger().bind(service="tournament")

    async def _run(self, context: Context, work: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(work)
        except TournamentRefused as error:
            await abort(context, refused(error))
        except ServiceError as error:
            await abort(context, error)
        except Exception as error:
            if is_transient(error):
                await abort(context, store_unavailable())
            self._log.exception("call failed", error=type(error).__name__)
            await abort(
                context, ServiceError(Code.INTERNAL, "INTERNAL", "the tournament service failed")
            )

    async def CreateTournament(
        self, request: pb.CreateTournamentRequest, context: Context
    ) -> pb.CreateTournamentResponse:
        def work() -> pb.CreateTournamentResponse:
            who = actor(request.actor)
            created = self._tournaments.create(
                who, settings_of(request.settings), request.request_id[:MAX_ACCOUNT]
            )
            return pb.CreateTournamentResponse(tournament=tournament_message(created, who))

        return await self._run(context, work)

    async def ListTournaments(
        self, request: pb.ListTournamentsRequest, context: Context
    ) -> pb.ListTournamentsResponse:
        def work() -> pb.ListTournamentsResponse:
            unknown = set(request.statuses) - STATUSES
            if unknown:
                raise _invalid(
                    "INVALID_STATUS",
                    f"a status is one of {', '.join(sorted(STATUSES))}, not {sorted(unknown)[0]!r}",
                )
            page = self._tournaments.list(
                request.actor,
                frozenset(request.statuses),
                request.page_size,
                request.page_token,
            )
            return pb.ListTournamentsResponse(
                tournaments=[summary_message(folded) for folded in page.tournaments],
                next_page_token=page.next_token,
            )

        return await self._run(context, work)

    async def GetTournament(
        self, request: pb.GetTournamentRequest, context: Context
    ) -> pb.GetTournamentResponse:
        def work() -> pb.GetTournamentResponse:
            found = self._tournaments.get(tournament_id(request.tournament_id))
            return pb.GetTournamentResponse(tournament=tournament_message(found, request.actor))

        return await self._run(context, work)

    async def EnterTournament(
        self, request: pb.EnterTournamentRequest, context: Context
    ) -> pb.EnterTournamentResponse:
        def work() -> pb.EnterTournamentResponse:
            who = actor(request.actor)
            entered = self._tournaments.enter(
                tournament_id(request.tournament_id), who, request.guest, request.rating_milli
            )
            return pb.EnterTournamentResponse(tournament=tournament_message(entered, who))

        return await self._run(context, work)

    async def WithdrawTournament(
        self, request: pb.WithdrawTournamentRequest, context: Context
    ) -> pb.WithdrawTournamentResponse:
        def work() -> pb.WithdrawTournamentResponse:
            who = actor(request.actor)
            left = self._tournaments.withdraw(tournament_id(request.tournament_id), who)
            return pb.WithdrawTournamentResponse(tournament=tournament_message(left, who))

        return await self._run(context, work)

    async def InviteToTournament(
        self, request: pb.InviteToTournamentRequest, context: Context
    ) -> pb.InviteToTournamentResponse:
        def work() -> pb.InviteToTournamentResponse:
            who = actor(request.actor)
            accounts = list(request.accounts)
            if len(accounts) > MAX_INVITES or any(len(a) > MAX_ACCOUNT for a in accounts):
                raise _invalid(
                    "INVALID_INVITATION",
                    f"invite at most {MAX_INVITES} accounts at once, each a known account id",
                )
            invited = self._tournaments.invite(tournament_id(request.tournament_id), who, accounts)
            return pb.InviteToTournamentResponse(tournament=tournament_message(invited, who))

        return await self._run(context, work)

    async def CancelTournament(
        self, request: pb.CancelTournamentRequest, context: Context
    ) -> pb.CancelTournamentResponse:
        def work() -> pb.CancelTournamentResponse:
            who = actor(request.actor)
            cancelled = self._tournaments.cancel(tournament_id(request.tournament_id), who)
            return pb.CancelTournamentResponse(tournament=tournament_message(cancelled, who))

        return await self._run(context, work)
