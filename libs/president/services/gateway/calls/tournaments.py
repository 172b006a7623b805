"""The tournament calls of the public API, forwarded to the tournament service as the caller.

The gateway says who acts (the token's account), whether it is a guest (the
token's kind: the tournament refuses a guest where the host did not allow
guests), and, on entering, the account's rating in the tournament's preset
(scoring's conservative rating, in thousandths; 0 when scoring has none or
cannot answer), which a rating-bands draw reads. Nothing the caller sends
can name another actor. The tournament service's refusals (NOT_HOST,
TOURNAMENT_FULL, ENTRY_CLOSED...) are passed on unchanged.
"""

from __future__ import annotations

import structlog

from president.gateway.v1 import gateway_pb2 as pb
from president.scoring.v1 import scoring_pb2 as spb
from president.servicekit.identity import GUEST, Identity
from president.services.gateway.upstream.ports import RatingsPort, TournamentPort
from president.standings.v1 import standings_pb2 as st
from president.tournaments.v1 import tournaments_pb2 as tpb

log = structlog.get_logger(service="gateway")


class Tournaments:
    """Create, list, read, enter, withdraw, invite and call off, for the caller."""

    def __init__(self, tournaments: TournamentPort, scoring: RatingsPort) -> None:
        self._tournaments = tournaments
        self._scoring = scoring

    async def create(
        self, identity: Identity, request: pb.CreateTournamentRequest
    ) -> tpb.CreateTournamentResponse:
        """A tournament hosted by the caller."""
        asked = tpb.CreateTournamentRequest(
            actor=identity.account_id, settings=request.settings, request_id=request.request_id
        )
        answer: tpb.CreateTournamentResponse = await self._tournaments.call(
            "CreateTournament", asked
        )
        return answer

    async def list(
        self, identity: Identity, request: pb.ListTournamentsRequest
    ) -> tpb.ListTournamentsResponse:
        """A page of the tournaments the caller may see."""
        asked = tpb.ListTournamentsRequest(
            statuses=request.statuses,
            page_size=request.page_size,
            page_token=request.page_token,
            actor=identity.account_id,
        )
        answer: tpb.ListTournamentsResponse = await self._tournaments.call("ListTournaments", asked)
        return answer

    async def get(
        self, identity: Identity, request: pb.GetTournamentRequest
    ) -> tpb.GetTournamentResponse:
        """One tournament, as the caller sees it."""
        asked = tpb.GetTournamentRequest(
            tournament_id=request.tournament_id, actor=identity.account_id
        )
        answer: tpb.GetTournamentResponse = await self._tournaments.call("GetTournament", asked)
        return answer

    async def enter(
        self, identity: Identity, request: pb.EnterTournamentRequest
    ) -> tpb.EnterTournamentResponse:
        """The caller enters, as a guest if its account is one, with its rating."""
        found: tpb.GetTournamentResponse = await self._tournaments.call(
            "GetTournament",
            tpb.GetTournamentRequest(
                tournament_id=request.tournament_id, actor=identity.account_id
            ),
        )
        rating = await self._rating_milli(identity, found.tournament.settings.preset)
        asked = tpb.EnterTournamentRequest(
            tournament_id=request.tournament_id,
            actor=identity.account_id,
            guest=identity.kind == GUEST,
            rating_milli=rating,
        )
        answer: tpb.EnterTournamentResponse = await self._tournaments.call("EnterTournament", asked)
        return answer

    async def withdraw(
        self, identity: Identity, request: pb.WithdrawTournamentRequest
    ) -> tpb.WithdrawTournamentResponse:
        """The caller withdraws their entry."""
        asked = tpb.WithdrawTournamentRequest(
            tournament_id=request.tournament_id, actor=identity.account_id
        )
        answer: tpb.WithdrawTournamentResponse = await self._tournaments.call(
            "WithdrawTournament", asked
        )
        return answer

    async def invite(
        self, identity: Identity, request: pb.InviteToTournamentRequest
    ) -> tpb.InviteToTournamentResponse:
        """The caller, as host, invites accounts."""
        asked = tpb.InviteToTournamentRequest(
            tournament_id=request.tournament_id,
            actor=identity.account_id,
            accounts=request.accounts,
        )
        answer: tpb.InviteToTournamentResponse = await self._tournaments.call(
            "InviteToTournament", asked
        )
        return answer

    async def cancel(
        self, identity: Identity, request: pb.CancelTournamentRequest
    ) -> tpb.CancelTournamentResponse:
        """The caller, as host, calls the tournament off."""
        asked = tpb.CancelTournamentRequest(
            tournament_id=request.tournament_id, actor=identity.account_id
        )
        answer: tpb.CancelTournamentResponse = await self._tournaments.call(
            "CancelTournament", asked
        )
        return answer

    async def _rating_milli(self, identity: Identity, preset: str) -> int:
        """The caller's conservative rating in ``preset``, in thousandths (0: none known)."""
        try:
            answer: st.GetRatingsResponse = await self._scoring.ratings_call(
                "GetRatings",
                spb.GetRatingsRequest(account_id=identity.account_id, preset=preset),
            )
        except Exception as error:  # no rating yet, or scoring away: enter unrated
            log.info("no rating for an entry", preset=preset, error=type(error).__name__)
            return 0
        for rating in answer.ratings:
            if rating.preset == preset:
                return round(rating.conservative * 1000)
        return 0
