"""The ratings calls of the public API: GetRatings, GetLeaderboard, GetHistory, GetHeadToHead.

Each is forwarded to scoring (which checks presets, boards, windows and
accounts, and refuses with its own reasons, passed on unchanged). The
gateway adds who is asking (an empty account id is the caller's own) and its
signed page tokens. A leaderboard's token holds the next position and is
bound to the board, the window's period and the page size: a token from a
period that has since reset (a new week or month) is ``PAGE_TOKEN_STALE``;
a forged one ``PAGE_TOKEN_INVALID``. A history's token is bound to the
account and the caller. Another account's history is its public summary:
totals and ratings, no games. So a head-to-head, which says that two accounts
played together and how often, answers only one of the two: anyone else is
refused ``HEAD_TO_HEAD_NOT_YOURS`` (PERMISSION_DENIED). Your own history before
you finished a round is empty (scoring does not know the account yet; anyone
else asking is told ``ACCOUNT_NOT_FOUND``).

Scoring knows accounts by id only: this is the one place that names them. A
leaderboard row gets its account's display name from the players service, a
bot level's account its level ("basic bot"); so do the others in a history's
games. A players service that cannot answer leaves the names empty (the board
is still shown, by id).
"""

from __future__ import annotations

from collections.abc import Iterable

from president.gateway.v1 import gateway_pb2 as pb
from president.rules.levels import LEVELS, bot_account
from president.scoring.v1 import scoring_pb2 as spb
from president.servicekit.errors import ServiceError, denied
from president.servicekit.identity import Identity
from president.services.gateway.calls.checks import invalid
from president.services.gateway.calls.page_tokens import PageTokens, page_size
from president.services.gateway.upstream.ports import NamesPort, RatingsPort
from president.standings.v1 import standings_pb2 as st

#: Players shown on each side of the caller's own entry (at most MAX_AROUND).
DEFAULT_AROUND = 2
MAX_AROUND = 10
#: A page token's life: long enough to read a board page by page.
TOKEN_SECONDS = 3600.0
#: A bot level's rating account, as a leaderboard names it.
BOT_NAMES = {bot_account(level): f"{level} bot" for level in LEVELS}


class Ratings:
    """Ratings, leaderboards, history and head-to-head, for the caller."""

    def __init__(self, scoring: RatingsPort, key: bytes, players: NamesPort) -> None:
        self._scoring = scoring
        self._players = players
        self._board_pages = PageTokens(key, "leaderboard", lifetime=TOKEN_SECONDS)
        self._history_pages = PageTokens(key, "history", lifetime=TOKEN_SECONDS)

    async def get_ratings(
        self, identity: Identity, request: pb.GetRatingsRequest
    ) -> st.GetRatingsResponse:
        """An account's ratings (the caller's when none is named)."""
        asked = spb.GetRatingsRequest(
            account_id=request.account_id or identity.account_id, preset=request.preset
        )
        answer: st.GetRatingsResponse = await self._scoring.ratings_call("GetRatings", asked)
        return answer

    async def get_leaderboard(
        self, identity: Identity, request: pb.GetLeaderboardRequest
    ) -> pb.GetLeaderboardResponse:
        """A page of a board, with the caller's own entry and the players around it."""
        size = page_size(request.page_size)
        if request.around > MAX_AROUND:
            raise invalid(
                "INVALID_AROUND", f"at most {MAX_AROUND} players on each side, not {request.around}"
            )
        bound: dict[str, object] = {
            "preset": request.preset,
            "board": request.board,
            "window": request.window,
            "size": size,
        }
        offset, period = 0, ""
        if request.page_token:
            position = self._board_pages.read(request.page_token, bound)
            period, _, at = str(position).rpartition("@")
            if not period or not at.isdigit():
                raise invalid("PAGE_TOKEN_INVALID", "this page token holds no page of a board")
            offset = int(at)
        asked = spb.GetLeaderboardRequest(
            preset=request.preset,
            board=request.board,
            window=request.window,
            as_of=request.as_of,
            offset=offset,
            limit=size,
            around_account_id=identity.account_id,
            around=request.around or DEFAULT_AROUND,
        )
        board: st.GetLeaderboardResponse = await self._scoring.ratings_call("GetLeaderboard", asked)
        if period and period != board.period:
            raise invalid(
                "PAGE_TOKEN_STALE",
                f"this board has reset since the page token was given ({period} is over, "
                f"{board.period} began): start again from the first page",
            )
        rows = [*board.entries, *board.around, *([board.own] if board.HasField("own") else [])]
        names = await self.names(row.account_id for row in rows)
        for row in rows:
            row.display_name = names.get(row.account_id, "")
        out = pb.GetLeaderboardResponse(board=board)
        after = offset + len(board.entries)
        if after < board.total:
            out.next_page_token = self._board_pages.issue(bound, f"{board.period}@{after}")
        return out

    async def get_history(
        self, identity: Identity, request: pb.GetHistoryRequest
    ) -> pb.GetHistoryResponse:
        """The caller's games and totals, or another account's public summary."""
        size = page_size(request.page_size)
        account = request.account_id or identity.account_id
        own = account == identity.account_id
        bound = {"account": account, "reader": identity.account_id, "size": size}
        offset = 0
        if request.page_token:
            position = self._history_pages.read(request.page_token, bound)
            if not isinstance(position, int) or position < 0:
                raise invalid("PAGE_TOKEN_INVALID", "this page token holds no page of a history")
            offset = position
        asked = spb.GetHistoryRequest(
            account_id=account, offset=offset, limit=size, summary_only=not own
        )
        try:
            history: st.GetHistoryResponse = await self._scoring.ratings_call("GetHistory", asked)
        except ServiceError as error:
            if not own or error.reason != "ACCOUNT_NOT_FOUND":
                raise
            # Your own history before your first round is empty, not unknown.
            history = st.GetHistoryResponse(account_id=account, totals=st.PlayerTotals())
        out = pb.GetHistoryResponse(history=history, public_summary=not own)
        out.display_names.update(await self.names(o for g in history.games for o in g.others))
        after = offset + len(history.games)
        if own and after < history.total_games:
            out.next_page_token = self._history_pages.issue(bound, after)
        return out

    async def get_head_to_head(
        self, identity: Identity, request: pb.GetHeadToHeadRequest
    ) -> st.GetHeadToHeadResponse:
        """How an account (the caller's by default) fared against an opponent: only for
        the two of them (who played with whom is theirs, as GetHistory keeps it)."""
        account = request.account_id or identity.account_id
        if identity.account_id not in (account, request.opponent_id):
            raise denied(
                "HEAD_TO_HEAD_NOT_YOURS",
                "a head-to-head is shown only to the two players in it: ask about your own "
                "games against an opponent",
            )
        asked = spb.GetHeadToHeadRequest(account_id=account, opponent_id=request.opponent_id)
        answer: st.GetHeadToHeadResponse = await self._scoring.ratings_call("GetHeadToHead", asked)
        return answer

    async def names(self, account_ids: Iterable[str]) -> dict[str, str]:
        """The display names of these accounts: a bot level's by its level, the others' as
        the players service keeps them ({} for all when it cannot answer)."""
        wanted = sorted(set(account_ids))
        names = {account: BOT_NAMES[account] for account in wanted if account in BOT_NAMES}
        people = [account for account in wanted if account not in names]
        if people:
            try:
                names.update(await self._players.display_names(people))
            except ServiceError:
                pass  # shown by id: a leaderboard need not wait for the players service
        return names
