"""The ratings calls of the Python client: ratings, leaderboards, history, head-to-head.

:class:`RatingCalls` is a part of :class:`~president.client.gateway.GatewayClient`:
``ratings``, ``leaderboard``, ``history`` and ``head_to_head``. An empty
account id means the client's own account.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from president.gateway.v1 import gateway_pb2 as pb
from president.standings.v1 import standings_pb2 as st


class RatingCalls:
    """Where the client's account stands, and how it played."""

    async def _unary(self, method: str, request: Message, timeout: float = 30.0) -> Any:
        raise NotImplementedError  # GatewayClient's

    async def ratings(self, account_id: str = "", preset: str = "") -> st.GetRatingsResponse:
        """An account's ratings per preset (one preset if named)."""
        found: st.GetRatingsResponse = await self._unary(
            "GetRatings", pb.GetRatingsRequest(account_id=account_id, preset=preset)
        )
        return found

    async def leaderboard(
        self,
        preset: str,
        board: str = "rating",
        window: str = "",
        *,
        as_of: str = "",
        page_size: int = 0,
        page_token: str = "",
        around: int = 0,
    ) -> pb.GetLeaderboardResponse:
        """A page of a preset's board ("rating", or "points" over "week", "month" or "all"),
        with this account's own entry and the players around it."""
        found: pb.GetLeaderboardResponse = await self._unary(
            "GetLeaderboard",
            pb.GetLeaderboardRequest(
                preset=preset,
                board=board,
                window=window,
                as_of=as_of,
                page_size=page_size,
                page_token=page_token,
                around=around,
            ),
        )
        return found

    async def history(
        self, account_id: str = "", page_size: int = 0, page_token: str = ""
    ) -> pb.GetHistoryResponse:
        """This account's games and totals (another account's: its public summary)."""
        found: pb.GetHistoryResponse = await self._unary(
            "GetHistory",
            pb.GetHistoryRequest(account_id=account_id, page_size=page_size, page_token=page_token),
        )
        return found

    async def head_to_head(
        self, opponent_id: str, account_id: str = ""
    ) -> st.GetHeadToHeadResponse:
        """How this account (or ``account_id``) fared against ``opponent_id``."""
        found: st.GetHeadToHeadResponse = await self._unary(
            "GetHeadToHead",
            pb.GetHeadToHeadRequest(opponent_id=opponent_id, account_id=account_id),
        )
        return found
