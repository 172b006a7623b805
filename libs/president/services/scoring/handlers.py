"""The scoring gRPC servicer: queries answered from the read models (the ratings half in
:mod:`president.services.scoring.ratings_handlers`)."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from president.scoring.v1 import scoring_pb2 as pb
from president.scoring.v1 import scoring_pb2_grpc
from president.servicekit import checks
from president.servicekit.errors import Code, ServiceError
from president.servicekit.grpc_errors import abort
from president.services.scoring.ratings_handlers import RatingsHandlers
from president.services.scoring.store import MAX_PLAYER_ID, ScoringStore

Context = grpc.aio.ServicerContext[Any, Any]


def _table_not_found(table_id: str) -> ServiceError:
    return ServiceError(
        Code.NOT_FOUND,
        "TABLE_NOT_FOUND",
        f"scoring knows no table {table_id!r} (yet: it follows the event stream)",
    )


class ScoringServicer(RatingsHandlers, scoring_pb2_grpc.ScoringServiceServicer):
    """GetStandings, GetGameResults, GetPlayerStats, and the ratings RPCs."""

    def __init__(self, store: ScoringStore) -> None:
        super().__init__(store.ratings)
        self._store = store

    async def GetStandings(
        self, request: pb.GetStandingsRequest, context: Context
    ) -> pb.GetStandingsResponse:
        try:
            table_id = checks.table_id(request.table_id)
            model = await asyncio.to_thread(self._store.table, table_id)
            if model is None:
                raise _table_not_found(table_id)
        except ServiceError as error:
            await abort(context, error)
        seats = [
            seat
            for seat in range(len(model.seated))
            if model.player_at(seat) or seat in model.last_standings
        ]
        return pb.GetStandingsResponse(
            table_id=table_id,
            game_no=model.game_no,
            rounds_played=model.rounds_played,
            standings=[
                pb.Standing(
                    seat=seat,
                    player_id=model.player_at(seat),
                    total=model.totals[seat] if seat < len(model.totals) else 0,
                    last_place=model.place_of(seat),
                )
                for seat in seats
            ],
            version=model.version,
        )

    async def GetGameResults(
        self, request: pb.GetGameResultsRequest, context: Context
    ) -> pb.GetGameResultsResponse:
        try:
            table_id = checks.table_id(request.table_id)
            model = await asyncio.to_thread(self._store.table, table_id)
            if model is None:
                raise _table_not_found(table_id)
            games = await asyncio.to_thread(self._store.games, table_id)
        except ServiceError as error:
            await abort(context, error)
        return pb.GetGameResultsResponse(
            games=[
                pb.GameResult(
                    game_no=game.game_no,
                    winners=game.winners,
                    winner_player_ids=game.winner_player_ids,
                    stopped=game.stopped,
                    totals=game.totals,
                    rounds=game.rounds,
                )
                for game in games
            ]
        )

    async def GetPlayerStats(
        self, request: pb.GetPlayerStatsRequest, context: Context
    ) -> pb.GetPlayerStatsResponse:
        try:
            player_id = request.player_id
            if not player_id.strip() or len(player_id) > MAX_PLAYER_ID:
                raise ServiceError(
                    Code.INVALID_ARGUMENT,
                    "INVALID_PLAYER",
                    f"a player id is 1 to {MAX_PLAYER_ID} characters, not blank",
                )
            stats = await asyncio.to_thread(self._store.player, player_id)
            if stats is None:
                raise ServiceError(
                    Code.NOT_FOUND,
                    "PLAYER_NOT_FOUND",
                    f"scoring has seen no player {player_id!r} at any table",
                )
        except ServiceError as error:
            await abort(context, error)
        return pb.GetPlayerStatsResponse(
            player_id=stats.player_id,
            rounds_played=stats.rounds_played,
            rounds_won=stats.rounds_won,
            games_played=stats.games_played,
            games_won=stats.games_won,
            points=stats.points,
            places=stats.places,
        )
