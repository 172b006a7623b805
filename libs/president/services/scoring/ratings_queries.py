"""Questions to the ratings read models: ratings, leaderboards, history, head-to-head.

Pure reads of the tables of :mod:`president.services.scoring.ratings_schema`;
the answers are the scoring protos' messages, built by
:mod:`president.services.scoring.ratings_handlers`.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Engine, and_, func, or_, select
from sqlalchemy.orm import aliased

from president.ratings.ranks import page_ranks
from president.ratings.skill import Skill
from president.ratings.totals import Totals, totals
from president.services.scoring.ratings_schema import (
    ratings_games,
    ratings_places,
    ratings_points,
    ratings_skills,
)
from president.services.scoring.sql import READ

RATING = "rating"
POINTS = "points"
BOARDS = (RATING, POINTS)


@dataclass(frozen=True)
class Entry:
    """One place on a board: its position from 0, its rank from 1, and what it holds."""

    position: int
    rank: int
    account: str
    value: float
    points: int = 0
    skill: Skill | None = None


@dataclass(frozen=True)
class Board:
    """A page of a board, its size, and an account's own entry with its neighbours."""

    entries: list[Entry]
    total: int
    own: Entry | None
    around: list[Entry]


@dataclass(frozen=True)
class Game:
    """One game of an account's history."""

    table_id: str
    game_no: int
    preset: str
    ranked: bool
    started_at: str
    ended_at: str
    stopped: bool | None
    winners: tuple[str, ...]
    others: tuple[str, ...]
    places: tuple[tuple[int, int, int], ...]  # (round, place, points)
    before: Skill | None
    after: Skill | None

    @property
    def points(self) -> int:
        return sum(points for _, _, points in self.places)

    def result(self, account: str) -> str:
        if self.stopped is None:
            return "playing"
        if self.stopped:
            return "stopped"
        return "won" if account in self.winners else "lost"


@dataclass(frozen=True)
class HeadToHead:
    """Two accounts at the games they shared."""

    games: int
    games_ahead: int
    games_behind: int
    rounds: int
    rounds_ahead: int
    rounds_behind: int


class RatingsQueries:
    """Reads of the ratings read models."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def _reading(self) -> Any:
        return self._engine.connect().execution_options(**READ)

    def known(self, account: str) -> bool:
        """Whether the account finished any round that scoring has seen."""
        with self._reading() as connection:
            found = connection.execute(
                select(ratings_places.c.account).where(ratings_places.c.account == account).limit(1)
            ).first()
        return found is not None

    def skills(self, account: str, preset: str = "") -> dict[str, Skill]:
        """The account's rating in each preset it was rated in (or in ``preset``)."""
        query = select(ratings_skills).where(ratings_skills.c.account == account)
        if preset:
            query = query.where(ratings_skills.c.preset == preset)
        with self._reading() as connection:
            rows = connection.execute(query.order_by(ratings_skills.c.preset)).all()
        return {row.preset: Skill(row.mu, row.sigma, row.rounds) for row in rows}

    def board(
        self,
        preset: str,
        board: str,
        period: str,
        offset: int,
        limit: int,
        account: str = "",
        around: int = 0,
    ) -> Board:
        """A page of a board (the rating board, or the points of a window's ``period``)."""
        if board == RATING:
            source: Any = ratings_skills
            value: Any = ratings_skills.c.conservative
            where: list[ColumnElement[bool]] = [ratings_skills.c.preset == preset]
        else:
            source = ratings_points
            value = ratings_points.c.points
            where = [ratings_points.c.preset == preset, ratings_points.c.period == period]
        with self._reading() as connection:

            def page(start: int, count: int) -> list[Entry]:
                rows = connection.execute(
                    select(source)
                    .where(*where)
                    .order_by(value.desc(), source.c.account)
                    .offset(start)
                    .limit(count)
                ).all()
                if not rows:
                    return []
                values = [_value(row, board) for row in rows]
                above = connection.execute(
                    select(func.count()).select_from(source).where(*where, value > values[0])
                ).scalar_one()
                ranks = page_ranks(values, int(above), start)
                return [
                    _entry(row, board, start + index, rank)
                    for index, (row, rank) in enumerate(zip(rows, ranks, strict=True))
                ]

            total = connection.execute(select(func.count()).select_from(source).where(*where))
            size = int(total.scalar_one())
            entries = page(offset, limit)
            own: Entry | None = None
            near: list[Entry] = []
            mine = (
                connection.execute(
                    select(source).where(*where, source.c.account == account)
                ).first()
                if account
                else None
            )
            if mine is not None:
                mine_value = _value(mine, board)
                position = connection.execute(
                    select(func.count())
                    .select_from(source)
                    .where(
                        *where,
                        or_(
                            value > mine_value,
                            and_(value == mine_value, source.c.account < account),
                        ),
                    )
                ).scalar_one()
                start = max(0, int(position) - around)
                near = page(start, int(position) - start + around + 1)
                own = next(entry for entry in near if entry.account == account)
        return Board(entries, size, own, near)

    def history(self, account: str, offset: int, limit: int) -> tuple[list[Game], int]:
        """A page of the account's games, newest first, and how many it played."""
        played = (
            select(ratings_places.c.table_id, ratings_places.c.game_no)
            .where(ratings_places.c.account == account)
            .distinct()
            .subquery()
        )
        with self._reading() as connection:
            count = connection.execute(select(func.count()).select_from(played)).scalar_one()
            rows = connection.execute(
                select(ratings_games)
                .join(
                    played,
                    and_(
                        ratings_games.c.table_id == played.c.table_id,
                        ratings_games.c.game_no == played.c.game_no,
                    ),
                )
                .order_by(
                    ratings_games.c.started_at.desc(),
                    ratings_games.c.table_id,
                    ratings_games.c.game_no.desc(),
                )
                .offset(offset)
                .limit(limit)
            ).all()
            if not rows:
                return [], int(count)
            places: dict[tuple[str, int], list[Any]] = {}
            for row in connection.execute(
                select(ratings_places)
                .where(ratings_places.c.table_id.in_(sorted({row.table_id for row in rows})))
                .order_by(ratings_places.c.round_no, ratings_places.c.seat)
            ):
                places.setdefault((row.table_id, row.game_no), []).append(row)
            rated: dict[str, list[str]] = {}
            for row in connection.execute(
                select(ratings_places.c.preset, ratings_places.c.ended_key)
                .where(ratings_places.c.account == account, ratings_places.c.ranked.is_(True))
                .distinct()
                .order_by(ratings_places.c.ended_key)
            ):
                rated.setdefault(row.preset, []).append(row.ended_key)
        games = [
            _game(account, row, places[(row.table_id, row.game_no)], rated.get(row.preset, []))
            for row in rows
        ]
        return games, int(count)

    def totals(self, account: str) -> tuple[Totals, int]:
        """The account's totals over every round, and its number of games."""
        with self._reading() as connection:
            rows = connection.execute(
                select(ratings_places.c.place, ratings_places.c.table_id, ratings_places.c.game_no)
                .where(ratings_places.c.account == account)
                .order_by(ratings_places.c.ended_key, ratings_places.c.seat)
            ).all()
        games = len({(row.table_id, row.game_no) for row in rows})
        return totals([row.place for row in rows]), games

    def head_to_head(self, account: str, opponent: str) -> HeadToHead:
        """How ``account`` fared against ``opponent`` in the rounds and games both played."""
        mine, theirs = aliased(ratings_places), aliased(ratings_places)
        with self._reading() as connection:
            rows = connection.execute(
                select(
                    mine.c.table_id,
                    mine.c.game_no,
                    mine.c.place,
                    theirs.c.place,
                    mine.c.points,
                    theirs.c.points,
                )
                .join(
                    theirs,
                    and_(
                        mine.c.table_id == theirs.c.table_id,
                        mine.c.game_no == theirs.c.game_no,
                        mine.c.round_no == theirs.c.round_no,
                    ),
                )
                .where(mine.c.account == account, theirs.c.account == opponent)
            ).all()
        return _head_to_head(rows)


def _game(account: str, game: Any, places: list[Any], rated_keys: list[str]) -> Game:
    """One game of ``account``'s history from its places rows (``rated_keys``: the ordering
    keys of every ranked round the account finished in the game's preset, oldest first)."""
    own = [row for row in places if row.account == account]
    rated = [row for row in own if row.mu_before is not None]
    before = after = None
    if rated:
        first, last = rated[0], rated[-1]
        rounds_before = bisect_left(rated_keys, first.ended_key)
        before = Skill(first.mu_before, first.sigma_before, rounds_before)
        after = Skill(
            last.mu_after,
            last.sigma_after,
            rounds_before + len({row.round_no for row in rated}),
        )
    return Game(
        table_id=game.table_id,
        game_no=game.game_no,
        preset=game.preset,
        ranked=bool(game.ranked),
        started_at=game.started_at,
        ended_at=game.ended_at or "",
        stopped=None if game.stopped is None else bool(game.stopped),
        winners=tuple(json.loads(game.winners)),
        others=tuple(sorted({row.account for row in places} - {account})),
        places=tuple((row.round_no, row.place, row.points) for row in own),
        before=before,
        after=after,
    )


def _head_to_head(rows: Sequence[Any]) -> HeadToHead:
    games: dict[tuple[str, int], list[int]] = {}
    ahead = behind = 0
    for table_id, game_no, my_place, their_place, my_points, their_points in rows:
        ahead += my_place < their_place
        behind += my_place > their_place
        tally = games.setdefault((table_id, game_no), [0, 0])
        tally[0] += my_points
        tally[1] += their_points
    return HeadToHead(
        games=len(games),
        games_ahead=sum(1 for mine, theirs in games.values() if mine > theirs),
        games_behind=sum(1 for mine, theirs in games.values() if mine < theirs),
        rounds=len(rows),
        rounds_ahead=ahead,
        rounds_behind=behind,
    )


def _value(row: Any, board: str) -> float:
    return float(row.conservative) if board == RATING else float(row.points)


def _entry(row: Any, board: str, position: int, rank: int) -> Entry:
    if board == RATING:
        skill = Skill(row.mu, row.sigma, row.rounds)
        return Entry(position, rank, row.account, skill.conservative, skill=skill)
    return Entry(position, rank, row.account, float(row.points), points=int(row.points))
