"""Scoring's ratings RPCs: GetRatings, GetLeaderboard, GetHistory, GetHeadToHead.

Every check of a ratings question lives here (the gateway adds only its
page tokens): an unknown preset, board or window, or a time that is not
ISO 8601, is INVALID_ARGUMENT; an account scoring has seen finish no round
is NOT_FOUND (``ACCOUNT_NOT_FOUND``). A question changes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import grpc

from president.ratings.skill import PROVISIONAL_ROUNDS, Skill
from president.ratings.windows import ALL_TIME, UnknownWindow, check_window, period
from president.rules.options import PRESETS
from president.scoring.v1 import scoring_pb2 as pb
from president.servicekit.checks import invalid
from president.servicekit.errors import Code, ServiceError
from president.servicekit.grpc_errors import abort
from president.services.scoring.ratings_queries import (
    BOARDS,
    RATING,
    Entry,
    Game,
    RatingsQueries,
)
from president.standings.v1 import standings_pb2 as st

Context = grpc.aio.ServicerContext[Any, Any]
MAX_ACCOUNT = 200
MAX_PAGE = 200
MAX_AROUND = 10


def rating_message(account: str, preset: str, skill: Skill) -> st.Rating:
    """A rating as the protos say it."""
    return st.Rating(
        account_id=account,
        preset=preset,
        mu=skill.mu,
        sigma=skill.sigma,
        conservative=skill.conservative,
        rounds=skill.rounds,
        provisional=skill.provisional,
        provisional_below=PROVISIONAL_ROUNDS,
    )


def _preset(value: str) -> str:
    if value not in PRESETS:
        raise invalid(
            "INVALID_PRESET", f"there is no preset {value!r}: the presets are {', '.join(PRESETS)}"
        )
    return value


def _account(value: str, what: str = "an account id") -> str:
    if not value.strip() or len(value) > MAX_ACCOUNT:
        raise invalid("INVALID_ACCOUNT", f"{what} is 1 to {MAX_ACCOUNT} characters, not blank")
    return value


def _moment(value: str, clock: Callable[[], datetime]) -> datetime:
    if not value:
        return clock()
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise invalid(
            "INVALID_TIME",
            f"as_of is a time in ISO 8601, such as 2026-12-01T12:00:00Z, not {value!r}",
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _unknown(account: str) -> ServiceError:
    return ServiceError(
        Code.NOT_FOUND,
        "ACCOUNT_NOT_FOUND",
        f"scoring has seen no round finished by account {account!r}",
    )


def _entry_message(entry: Entry, preset: str) -> st.LeaderboardEntry:
    message = st.LeaderboardEntry(
        rank=entry.rank,
        account_id=entry.account,
        value=entry.value,
        points=entry.points,
        position=entry.position,
    )
    if entry.skill is not None:
        message.rating.CopyFrom(rating_message(entry.account, preset, entry.skill))
    return message


def _game_message(account: str, game: Game) -> st.GameHistory:
    message = st.GameHistory(
        table_id=game.table_id,
        game_no=game.game_no,
        preset=game.preset,
        started_at=game.started_at,
        ended_at=game.ended_at,
        others=game.others,
        rounds=[st.RoundPlace(round_no=r, place=p, points=n) for r, p, n in game.places],
        points=game.points,
        result=game.result(account),
        ranked=game.ranked,
    )
    if game.before is not None and game.after is not None:
        message.rating_before.CopyFrom(rating_message(account, game.preset, game.before))
        message.rating_after.CopyFrom(rating_message(account, game.preset, game.after))
    return message


class RatingsHandlers:
    """The ratings half of the scoring servicer (mixed into ``ScoringServicer``)."""

    def __init__(
        self, ratings: RatingsQueries, clock: Callable[[], datetime] | None = None
    ) -> None:
        self._ratings = ratings
        self._clock = clock or (lambda: datetime.now(UTC))

    async def _known(self, account: str) -> None:
        if not await asyncio.to_thread(self._ratings.known, account):
            raise _unknown(account)

    async def GetRatings(
        self, request: pb.GetRatingsRequest, context: Context
    ) -> st.GetRatingsResponse:
        try:
            account = _account(request.account_id)
            preset = _preset(request.preset) if request.preset else ""
            await self._known(account)
            skills = await asyncio.to_thread(self._ratings.skills, account, preset)
        except ServiceError as error:
            await abort(context, error)
        if preset and preset not in skills:
            skills = {preset: Skill()}  # seen, never rated there: a new account's rating
        return st.GetRatingsResponse(
            account_id=account,
            ratings=[rating_message(account, name, skill) for name, skill in skills.items()],
        )

    async def GetLeaderboard(
        self, request: pb.GetLeaderboardRequest, context: Context
    ) -> st.GetLeaderboardResponse:
        try:
            preset = _preset(request.preset)
            board = request.board or RATING
            if board not in BOARDS:
                raise invalid(
                    "INVALID_BOARD", f"there is no board {board!r}: choose {' or '.join(BOARDS)}"
                )
            window = check_window(request.window or ALL_TIME)
            if board == RATING and window != ALL_TIME:
                raise invalid(
                    "INVALID_WINDOW",
                    "the rating board has no window (a rating is of all time): windows are for "
                    "the points board",
                )
            span = period(window, _moment(request.as_of, self._clock))
            limit = min(request.limit or 50, MAX_PAGE)
            around = min(request.around, MAX_AROUND)
            account = _account(request.around_account_id) if request.around_account_id else ""
            found = await asyncio.to_thread(
                self._ratings.board,
                preset,
                board,
                span.key,
                request.offset,
                limit,
                account,
                around,
            )
        except UnknownWindow as error:
            await abort(context, invalid("INVALID_WINDOW", str(error)))
        except ServiceError as error:
            await abort(context, error)
        response = st.GetLeaderboardResponse(
            preset=preset,
            board=board,
            window=window,
            period=span.key,
            starts=span.starts.isoformat() if span.starts else "",
            ends=span.ends.isoformat() if span.ends else "",
            entries=[_entry_message(entry, preset) for entry in found.entries],
            total=found.total,
            around=[_entry_message(entry, preset) for entry in found.around],
        )
        if found.own is not None:
            response.own.CopyFrom(_entry_message(found.own, preset))
        return response

    async def GetHistory(
        self, request: pb.GetHistoryRequest, context: Context
    ) -> st.GetHistoryResponse:
        try:
            account = _account(request.account_id)
            await self._known(account)
            totals, games_played = await asyncio.to_thread(self._ratings.totals, account)
            skills = await asyncio.to_thread(self._ratings.skills, account)
            games: list[Game] = []
            if not request.summary_only:
                games, _ = await asyncio.to_thread(
                    self._ratings.history,
                    account,
                    request.offset,
                    min(request.limit or 50, MAX_PAGE),
                )
        except ServiceError as error:
            await abort(context, error)
        return st.GetHistoryResponse(
            account_id=account,
            totals=st.PlayerTotals(
                games=games_played,
                rounds=totals.rounds,
                places=totals.places,
                average_place=totals.average_place,
                best_streak=totals.best_streak,
            ),
            games=[_game_message(account, game) for game in games],
            ratings=[rating_message(account, name, skill) for name, skill in skills.items()],
            total_games=games_played,
        )

    async def GetHeadToHead(
        self, request: pb.GetHeadToHeadRequest, context: Context
    ) -> st.GetHeadToHeadResponse:
        try:
            account = _account(request.account_id)
            opponent = _account(request.opponent_id, "an opponent's account id")
            if opponent == account:
                raise invalid("SAME_ACCOUNT", "a head-to-head is between two different accounts")
            await self._known(account)
            await self._known(opponent)
            found = await asyncio.to_thread(self._ratings.head_to_head, account, opponent)
        except ServiceError as error:
            await abort(context, error)
        return st.GetHeadToHeadResponse(
            account_id=account,
            opponent_id=opponent,
            games=found.games,
            games_ahead=found.games_ahead,
            games_behind=found.games_behind,
            games_level=found.games - found.games_ahead - found.games_behind,
            rounds=found.rounds,
            rounds_ahead=found.rounds_ahead,
            rounds_behind=found.rounds_behind,
        )
