"""The ratings read models as events change them, inside scoring's transaction.

:class:`RatingsBatch` rides along with scoring's batch (``store._Batch``): it
is told each applied event and writes, in the same transaction as scoring's
progress rows, so each event counts exactly once across redelivery and
restarts. A round's ratings are folded in the order rounds *ended* (the
event's time, then its stream and version: a key that does not depend on
the order messages arrive in). A round that arrives before one already
folded (a redelivered message from another table) makes its preset be folded
again from the first round, so the ratings are always the fold of every
round in key order: a replay from the store gives them bit for bit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from itertools import groupby
from typing import Any

from sqlalchemy import Connection, and_, bindparam, delete, distinct, func, insert, select, update

from president.hosting.events import TableCreated, TableEvent
from president.hosting.visibility import PRACTICE
from president.ratings.accounts import is_bot, rating_account
from president.ratings.skill import Skill, rate_round
from president.ratings.windows import periods
from president.rules import game as g
from president.rules import round as rnd
from president.rules.options import LEADERBOARDS_OPTION
from president.services.scoring.ratings_schema import (
    ratings_folds,
    ratings_games,
    ratings_places,
    ratings_points,
    ratings_skills,
    ratings_tables,
)
from president.services.scoring.readmodels import TableModel
from president.services.scoring.sql import insert_ignore

_EPOCH = "1970-01-01T00:00:00.000000Z"

_UPDATE_PLACE = (
    update(ratings_places)
    .where(
        ratings_places.c.table_id == bindparam("k_table"),
        ratings_places.c.game_no == bindparam("k_game"),
        ratings_places.c.round_no == bindparam("k_round"),
        ratings_places.c.seat == bindparam("k_seat"),
    )
    .values(
        mu_before=bindparam("mu_before"),
        sigma_before=bindparam("sigma_before"),
        mu_after=bindparam("mu_after"),
        sigma_after=bindparam("sigma_after"),
    )
)
_ADD_POINTS = (
    update(ratings_points)
    .where(
        ratings_points.c.preset == bindparam("k_preset"),
        ratings_points.c.period == bindparam("k_period"),
        ratings_points.c.account == bindparam("k_account"),
    )
    .values(points=ratings_points.c.points + bindparam("delta"))
)


def instant(time: str) -> str:
    """An event's ISO 8601 time as fixed-width UTC text (sorts as it reads)."""
    try:
        parsed = datetime.fromisoformat(time)
    except ValueError:
        return _EPOCH
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ranked_table(event: TableCreated) -> bool:
    """Whether a table's rounds count for ratings and leaderboards (``leaderboards``)."""
    given = dict(event.options).get(LEADERBOARDS_OPTION)
    if given is None:  # a table from before the option: practice tables never counted
        return event.visibility != PRACTICE
    return given == "true"


class RatingsBatch:
    """What one scoring transaction changes in the ratings read models."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._tables: dict[str, tuple[str, bool] | None] = {}
        self._new_tables: list[dict[str, Any]] = []
        self._started: list[dict[str, Any]] = []
        self._ended: list[dict[str, Any]] = []
        self._places: list[dict[str, Any]] = []

    def observe(
        self, stream_id: str, version: int, time: str, event: TableEvent, table: TableModel
    ) -> None:
        """Note one applied event of ``table`` (the scoring model after it)."""
        table_id = table.table_id
        if isinstance(event, TableCreated):
            self._tables[table_id] = (event.preset, ranked_table(event))
            self._new_tables.append(
                {"table_id": table_id, "preset": event.preset, "ranked": ranked_table(event)}
            )
            return
        if not isinstance(event, g.GameStarted | rnd.RoundEnded | g.GameEnded | g.GameInterrupted):
            return
        known = self._table(table_id)
        if known is None:
            return  # a table created before ratings existed: a rebuild counts it
        preset, ranked = known
        at = instant(time)
        if isinstance(event, g.GameStarted):
            self._started.append(
                {
                    "table_id": table_id,
                    "game_no": event.game_no,
                    "preset": preset,
                    "ranked": ranked,
                    "started_at": at,
                    "winners": "[]",
                }
            )
        elif isinstance(event, rnd.RoundEnded):
            key = f"{at}|{stream_id}|{version:012d}"
            for place, seat in enumerate(event.standings):
                player = table.last_round[seat] if seat < len(table.last_round) else ""
                if not player:
                    continue
                self._places.append(
                    {
                        "table_id": table_id,
                        "game_no": table.game_no,
                        "round_no": table.rounds_played,
                        "seat": seat,
                        "account": rating_account(player),
                        "preset": preset,
                        "ranked": ranked,
                        "ended_key": key,
                        "ended_at": at,
                        "place": place + 1,
                        "points": event.points[seat],
                    }
                )
        else:
            winners = event.winners if isinstance(event, g.GameEnded) else ()
            stopped = event.stopped if isinstance(event, g.GameEnded) else True
            self._ended.append(
                {
                    "k_table": table_id,
                    "k_game": table.game_no,
                    "ended_at": at,
                    "stopped": stopped,
                    "winners": json.dumps(
                        [rating_account(table.player_at(seat)) for seat in winners]
                    ),
                }
            )

    def _table(self, table_id: str) -> tuple[str, bool] | None:
        if table_id not in self._tables:
            row = self._connection.execute(
                select(ratings_tables.c.preset, ratings_tables.c.ranked).where(
                    ratings_tables.c.table_id == table_id
                )
            ).first()
            self._tables[table_id] = None if row is None else (row.preset, bool(row.ranked))
        return self._tables[table_id]

    def flush(self) -> None:
        """Write what the batch noted, then fold the new ranked rounds into the ratings."""
        connection = self._connection
        if self._new_tables:
            insert_ignore(connection, ratings_tables, self._new_tables)
        if self._started:
            insert_ignore(connection, ratings_games, self._started)
        if self._ended:
            connection.execute(
                update(ratings_games)
                .where(
                    ratings_games.c.table_id == bindparam("k_table"),
                    ratings_games.c.game_no == bindparam("k_game"),
                )
                .values(
                    ended_at=bindparam("ended_at"),
                    stopped=bindparam("stopped"),
                    winners=bindparam("winners"),
                ),
                self._ended,
            )
        if not self._places:
            return
        insert_ignore(connection, ratings_places, self._places)
        ranked = [row for row in self._places if row["ranked"]]
        self._add_points(ranked)
        earliest: dict[str, str] = {}
        for row in ranked:
            preset = row["preset"]
            earliest[preset] = min(earliest.get(preset, row["ended_key"]), row["ended_key"])
        for preset in sorted(earliest):
            fold(connection, preset, earliest[preset])

    def _add_points(self, rows: Iterable[dict[str, Any]]) -> None:
        add_points(self._connection, rows)


def add_points(connection: Connection, rows: Iterable[Any]) -> None:
    """Add ranked places' points to their accounts' points per preset and period (bots'
    excluded). ``rows``: mappings or rows with account, preset, ended_at and points."""
    deltas: dict[tuple[str, str, str], int] = {}
    for row in rows:
        item = row if isinstance(row, dict) else row._mapping
        if is_bot(item["account"]):
            continue
        when = datetime.fromisoformat(item["ended_at"].replace("Z", "+00:00"))
        for period in periods(when):
            key = (item["preset"], period.key, item["account"])
            deltas[key] = deltas.get(key, 0) + item["points"]
    if not deltas:
        return
    keys = sorted(deltas)
    insert_ignore(
        connection,
        ratings_points,
        [{"preset": p, "period": w, "account": a, "points": 0} for p, w, a in keys],
    )
    connection.execute(
        _ADD_POINTS,
        [
            {"k_preset": p, "k_period": w, "k_account": a, "delta": deltas[(p, w, a)]}
            for p, w, a in keys
        ],
    )


def forget_table(connection: Connection, table_id: str) -> None:
    """Take a table out of the ratings read models, as if it was never seen (its history was
    rewound: its events are applied again from the store). Its rounds leave the folds: each
    preset it counted in is folded again from its first round, with its accounts' ratings
    and points computed again from the places left."""
    places = connection.execute(
        select(ratings_places).where(ratings_places.c.table_id == table_id)
    ).all()
    for table in (ratings_places, ratings_games, ratings_tables):
        connection.execute(delete(table).where(table.c.table_id == table_id))
    earliest: dict[str, str] = {}
    accounts: dict[str, set[str]] = {}
    for row in places:
        if row.ranked:
            earliest[row.preset] = min(earliest.get(row.preset, row.ended_key), row.ended_key)
            accounts.setdefault(row.preset, set()).add(row.account)
    for preset in sorted(earliest):
        mine = sorted(accounts[preset])
        connection.execute(
            delete(ratings_points).where(
                ratings_points.c.preset == preset, ratings_points.c.account.in_(mine)
            )
        )
        add_points(
            connection,
            connection.execute(
                select(ratings_places).where(
                    ratings_places.c.preset == preset,
                    ratings_places.c.ranked.is_(True),
                    ratings_places.c.account.in_(mine),
                )
            ).all(),
        )
        fold(connection, preset, earliest[preset], also=mine)
        last = connection.execute(
            select(func.max(ratings_places.c.ended_key)).where(
                ratings_places.c.preset == preset, ratings_places.c.ranked.is_(True)
            )
        ).scalar()
        if last is None:  # no ranked round of the preset is left
            connection.execute(delete(ratings_folds).where(ratings_folds.c.preset == preset))
        else:
            connection.execute(
                update(ratings_folds).where(ratings_folds.c.preset == preset).values(last_key=last)
            )


def fold(connection: Connection, preset: str, earliest_new: str, also: Iterable[str] = ()) -> None:
    """Fold a preset's ranked rounds from ``earliest_new`` on into its ratings (and
    ``also`` those accounts', whose rounds from then on were taken out).

    Usually the new rounds come after every round folded before: they go on
    from the ratings as they are. A round that ended before the last one
    folded (it arrived late) makes every round from it on be folded again,
    from each account's rating after its last round before it (the stored
    ``mu_after`` and ``sigma_after``, exact floats): the same ratings as a
    fold of every round in order. The preset's fold row is locked first, so
    two scoring replicas fold one preset in turn.
    """
    insert_ignore(connection, ratings_folds, [{"preset": preset, "last_key": ""}])
    last = connection.execute(
        select(ratings_folds.c.last_key).where(ratings_folds.c.preset == preset).with_for_update()
    ).scalar_one()
    rows = connection.execute(
        select(ratings_places)
        .where(
            ratings_places.c.preset == preset,
            ratings_places.c.ranked.is_(True),
            ratings_places.c.ended_key >= earliest_new,
        )
        .order_by(ratings_places.c.ended_key, ratings_places.c.place)
    ).all()
    accounts = sorted({row.account for row in rows} | set(also))
    if not accounts:
        return
    skills = (
        _skills_before(connection, preset, accounts, earliest_new)
        if earliest_new <= last or also
        else _skills_of(connection, preset, accounts)
    )
    updates: list[dict[str, Any]] = []
    for _, round_rows in groupby(rows, key=lambda row: row.ended_key):
        places = list(round_rows)
        before = dict(skills)
        skills.update(rate_round(skills, [row.account for row in places]))
        for row in places:
            old, new = before.get(row.account, Skill()), skills.get(row.account, Skill())
            updates.append(
                {
                    "k_table": row.table_id,
                    "k_game": row.game_no,
                    "k_round": row.round_no,
                    "k_seat": row.seat,
                    "mu_before": old.mu,
                    "sigma_before": old.sigma,
                    "mu_after": new.mu,
                    "sigma_after": new.sigma,
                }
            )
    if updates:
        connection.execute(_UPDATE_PLACE, updates)
    connection.execute(
        delete(ratings_skills).where(
            and_(ratings_skills.c.preset == preset, ratings_skills.c.account.in_(accounts))
        )
    )
    if rows:
        connection.execute(
            update(ratings_folds)
            .where(ratings_folds.c.preset == preset)
            .values(last_key=max(last, rows[-1].ended_key))
        )
    if not skills:
        return
    connection.execute(
        insert(ratings_skills),
        [
            {
                "preset": preset,
                "account": account,
                "mu": skill.mu,
                "sigma": skill.sigma,
                "rounds": skill.rounds,
                "conservative": skill.conservative,
            }
            for account, skill in sorted(skills.items())
        ],
    )


def _skills_of(connection: Connection, preset: str, accounts: list[str]) -> dict[str, Skill]:
    """The accounts' ratings as they are."""
    found = connection.execute(
        select(ratings_skills).where(
            ratings_skills.c.preset == preset, ratings_skills.c.account.in_(accounts)
        )
    ).all()
    return {row.account: Skill(row.mu, row.sigma, row.rounds) for row in found}


def _skills_before(
    connection: Connection, preset: str, accounts: list[str], key: str
) -> dict[str, Skill]:
    """The accounts' ratings after their last ranked round that ended before ``key``."""
    skills: dict[str, Skill] = {}
    for account in accounts:
        mine = (
            ratings_places.c.preset == preset,
            ratings_places.c.ranked.is_(True),
            ratings_places.c.account == account,
            ratings_places.c.ended_key < key,
        )
        last = connection.execute(
            select(ratings_places.c.mu_after, ratings_places.c.sigma_after)
            .where(*mine)
            .order_by(ratings_places.c.ended_key.desc())
            .limit(1)
        ).first()
        if last is None:
            continue
        rounds = connection.execute(
            select(func.count(distinct(ratings_places.c.ended_key))).where(*mine)
        ).scalar_one()
        skills[account] = Skill(last.mu_after, last.sigma_after, int(rounds))
    return skills
