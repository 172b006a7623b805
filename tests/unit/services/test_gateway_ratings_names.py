"""The gateway names the rows of a leaderboard and the others of a history (scoring knows ids
only): people as the players service keeps them, bot levels by their level, nothing when the
players service cannot answer."""

from __future__ import annotations

import asyncio
from typing import Any

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.errors import Code, ServiceError
from president.servicekit.identity import Identity
from president.services.gateway.calls.ratings import Ratings
from president.standings.v1 import standings_pb2 as st

ADA = Identity("g-ada", "Ada", "guest", "s-1", 2_000_000_000)


class Scoring:
    """Scoring's answers, by method."""

    def __init__(self, **answers: Any) -> None:
        self.answers = answers

    async def ratings_call(self, method: str, request: Any) -> Any:
        return self.answers[method]


class Players:
    def __init__(self, names: dict[str, str] | None) -> None:
        self.names = names
        self.asked: list[list[str]] = []

    async def display_names(self, account_ids: list[str]) -> dict[str, str]:
        self.asked.append(account_ids)
        if self.names is None:
            raise ServiceError(Code.UNAVAILABLE, "UPSTREAM_UNAVAILABLE", "players is down")
        return {a: self.names[a] for a in account_ids if a in self.names}


def board() -> st.GetLeaderboardResponse:
    entries = [
        st.LeaderboardEntry(rank=1, account_id="g-bob"),
        st.LeaderboardEntry(rank=2, account_id="bot:basic"),
        st.LeaderboardEntry(rank=3, account_id="g-ada"),
    ]
    return st.GetLeaderboardResponse(
        preset="house", entries=entries, around=entries[1:], own=entries[2], total=3
    )


def test_every_row_of_a_leaderboard_is_named() -> None:
    players = Players({"g-ada": "Ada", "g-bob": "Bob"})
    ratings = Ratings(Scoring(GetLeaderboard=board()), b"k" * 32, players)
    answer = asyncio.run(ratings.get_leaderboard(ADA, pb.GetLeaderboardRequest(preset="house")))
    assert [e.display_name for e in answer.board.entries] == ["Bob", "basic bot", "Ada"]
    assert [e.display_name for e in answer.board.around] == ["basic bot", "Ada"]
    assert answer.board.own.display_name == "Ada"
    assert players.asked == [["g-ada", "g-bob"]]  # once, each person once, no bot


def test_a_board_is_shown_by_id_when_the_players_service_cannot_answer() -> None:
    ratings = Ratings(Scoring(GetLeaderboard=board()), b"k" * 32, Players(None))
    answer = asyncio.run(ratings.get_leaderboard(ADA, pb.GetLeaderboardRequest(preset="house")))
    assert [e.display_name for e in answer.board.entries] == ["", "basic bot", ""]


def test_the_others_of_your_games_are_named() -> None:
    history = st.GetHistoryResponse(
        account_id="g-ada",
        games=[st.GameHistory(table_id="t1", others=["g-bob", "bot:strong"])],
        total_games=1,
    )
    ratings = Ratings(Scoring(GetHistory=history), b"k" * 32, Players({"g-bob": "Bob"}))
    answer = asyncio.run(ratings.get_history(ADA, pb.GetHistoryRequest()))
    assert dict(answer.display_names) == {"g-bob": "Bob", "bot:strong": "strong bot"}


class Unknown(Scoring):
    async def ratings_call(self, method: str, request: Any) -> Any:
        raise ServiceError(Code.NOT_FOUND, "ACCOUNT_NOT_FOUND", "scoring has seen no round")


def test_your_own_history_before_your_first_round_is_empty_not_unknown() -> None:
    ratings = Ratings(Unknown(), b"k" * 32, Players({}))
    answer = asyncio.run(ratings.get_history(ADA, pb.GetHistoryRequest()))
    assert answer.history.account_id == "g-ada" and not answer.history.games
    assert answer.history.totals.rounds == 0
    try:  # someone else's is still unknown
        asyncio.run(ratings.get_history(ADA, pb.GetHistoryRequest(account_id="g-bob")))
    except ServiceError as error:
        assert error.reason == "ACCOUNT_NOT_FOUND"
    else:
        raise AssertionError("another account's unknown history was answered")
