"""The tournament calls of the Python client: create, list, read, enter, withdraw, invite, cancel.

:class:`TournamentCalls` is a part of :class:`~president.client.gateway.GatewayClient`.
Each acts as the client's account; times are Unix milliseconds, as the
protos carry them (``docs/tournaments.md``).
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from president.gateway.v1 import gateway_pb2 as pb
from president.tournaments.v1 import tournaments_pb2 as tpb


class TournamentCalls:
    """Tournaments, as the client's account takes part in them."""

    async def _unary(self, method: str, request: Message, timeout: float = 30.0) -> Any:
        raise NotImplementedError  # GatewayClient's

    async def create_tournament(
        self, settings: tpb.TournamentSettings, request_id: str = ""
    ) -> tpb.Tournament:
        """A new tournament hosted by this account."""
        created: tpb.CreateTournamentResponse = await self._unary(
            "CreateTournament",
            pb.CreateTournamentRequest(settings=settings, request_id=request_id),
        )
        return created.tournament

    async def list_tournaments(
        self, statuses: tuple[str, ...] = (), page_size: int = 0, page_token: str = ""
    ) -> tpb.ListTournamentsResponse:
        """A page of the tournaments this account may see, newest first."""
        found: tpb.ListTournamentsResponse = await self._unary(
            "ListTournaments",
            pb.ListTournamentsRequest(
                statuses=statuses, page_size=page_size, page_token=page_token
            ),
        )
        return found

    async def tournament(self, tournament_id: str) -> tpb.Tournament:
        """One tournament: settings, entrants, rounds and standings."""
        found: tpb.GetTournamentResponse = await self._unary(
            "GetTournament", pb.GetTournamentRequest(tournament_id=tournament_id)
        )
        return found.tournament

    async def enter_tournament(self, tournament_id: str) -> tpb.Tournament:
        """Enter with this account."""
        entered: tpb.EnterTournamentResponse = await self._unary(
            "EnterTournament", pb.EnterTournamentRequest(tournament_id=tournament_id)
        )
        return entered.tournament

    async def withdraw_tournament(self, tournament_id: str) -> tpb.Tournament:
        """Withdraw this account's entry."""
        left: tpb.WithdrawTournamentResponse = await self._unary(
            "WithdrawTournament", pb.WithdrawTournamentRequest(tournament_id=tournament_id)
        )
        return left.tournament

    async def invite_to_tournament(
        self, tournament_id: str, accounts: tuple[str, ...]
    ) -> tpb.Tournament:
        """Host: invite accounts."""
        invited: tpb.InviteToTournamentResponse = await self._unary(
            "InviteToTournament",
            pb.InviteToTournamentRequest(tournament_id=tournament_id, accounts=accounts),
        )
        return invited.tournament

    async def cancel_tournament(self, tournament_id: str) -> tpb.Tournament:
        """Host: call the tournament off."""
        cancelled: tpb.CancelTournamentResponse = await self._unary(
            "CancelTournament", pb.CancelTournamentRequest(tournament_id=tournament_id)
        )
        return cancelled.tournament
