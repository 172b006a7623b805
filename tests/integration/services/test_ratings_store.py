"""Scoring's ratings read models on real SQLite and PostgreSQL: each round rated once, in the
order rounds ended whatever order the messages come in, rebuilt bit for bit from the store,
windows split at their boundary, ties sharing a rank, and a failed write never acknowledged."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, delete, select, text

from president import codec
from president.events.v1 import events_pb2 as pb
from president.hosting.events import TableCreated
from president.ratings.skill import Skill
from president.ratings.windows import period
from president.services.scoring import ratings_schema
from president.services.scoring.consumer import Consumer
from president.services.scoring.store import APPLIED, ScoringStore
from president.services.scoring.store import metadata as scoring_metadata
from president.store import EventStore, migrate
from tests.integration.services.test_scoring_store import (
    FakeHistory,
    bot_games,
    events_store,
    scoring_url,
)
from tests.support.ratings_truth import expected_skills

__all__ = ["events_store", "scoring_url"]

FIRST = ["alice", "bob", "bot:basic:1", "bot:strong:2"]
SECOND = ["alice", "carol", "bot:basic:3", "bot:basic:4"]
THIRD = ["bob", "carol", "dora", "bot:strong:1"]


def rows(url: str, table: Any) -> list[tuple[Any, ...]]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            key = list(table.primary_key.columns)
            return [tuple(row) for row in connection.execute(select(table).order_by(*key))]
    finally:
        engine.dispose()


def read_models(url: str) -> dict[str, list[tuple[Any, ...]]]:
    return {table.name: rows(url, table) for table in ratings_schema.ALL}


def test_rounds_are_rated_once_in_the_order_they_ended_and_rebuilt_bit_for_bit(
    events_store: EventStore, scoring_url: str, tmp_path: Path
) -> None:
    first = bot_games(events_store, "rate1", FIRST, games=1)
    second = bot_games(events_store, "rate2", SECOND, games=1)
    third = bot_games(events_store, "rate3", THIRD, games=1)
    expected = expected_skills(first + second + third)
    store = ScoringStore(scoring_url)
    try:
        # The tables' messages out of the order their rounds ended (the second table's come
        # last: its rounds are folded again from there), each delivered twice.
        for item in first + third + second:
            store.apply(item)
            store.apply(item)
        models = read_models(scoring_url)
        got = store.ratings.skills("alice")
        assert got["house"] == expected["alice"]
        for account in ("bob", "carol", "dora", "bot:basic", "bot:strong"):
            assert store.ratings.skills(account)["house"] == expected[account]
        assert expected["bot:basic"].rounds == 4  # two rounds a table, counted once each
        # Alice's history: her rating before her first game and after her last, newest first.
        games, count = store.ratings.history("alice", 0, 10)
        assert count == 2 and [game.table_id for game in games] == ["rate2", "rate1"]
        assert games[1].before == Skill() and games[0].after == expected["alice"]
        assert games[0].before == games[1].after and games[1].after is not None
        assert games[1].after.rounds == 2
        # Rating before and after chain from round to round for each account.
        by_account: dict[str, list[Any]] = {}
        for row in models["ratings_places"]:
            by_account.setdefault(row[4], []).append(row)
        for account, places in by_account.items():
            chain = sorted({(p[7], p[11], p[12], p[13], p[14]) for p in places})
            for earlier, later in itertools.pairwise(chain):
                assert (earlier[3], earlier[4]) == (later[1], later[2]), account

        # Drop the read models and replay the store in its global order: the same, bit for bit.
        engine = create_engine(scoring_url)
        with engine.begin() as connection:
            for table in [*ratings_schema.ALL, *reversed(scoring_metadata.sorted_tables)]:
                connection.execute(delete(table))
        engine.dispose()
        replayed = [*first, *second, *third]
        for start in range(0, len(replayed), 9):
            store.apply_batch(replayed[start : start + 9])
        assert read_models(scoring_url) == models
    finally:
        store.close()


def test_a_practice_table_counts_for_history_but_not_for_ratings_or_points(
    events_store: EventStore, tmp_path: Path
) -> None:
    envelopes = bot_games(events_store, "solo", ["dora", "bot:basic:1", "bot:basic:2"], games=1)
    created = codec.decode(envelopes[0].type, envelopes[0].payload)
    assert isinstance(created, TableCreated)
    options = dict(created.options) | {"leaderboards": "false"}
    unranked = TableCreated(**{**created._asdict(), "options": tuple(sorted(options.items()))})
    first = pb.EventEnvelope()
    first.CopyFrom(envelopes[0])
    first.payload = codec.encode(unranked).SerializeToString()
    url = f"sqlite:///{tmp_path / 'practice.db'}"
    migrate(url)
    store = ScoringStore(url)
    try:
        for item in [first, *envelopes[1:]]:
            assert store.apply(item) == APPLIED
        games, count = store.ratings.history("dora", 0, 10)
        assert count == 1 and not games[0].ranked and len(games[0].places) == 2
        assert games[0].before is None and games[0].after is None
        assert store.ratings.skills("dora") == {}
        assert store.ratings.board("house", "points", "all", 0, 10).total == 0
    finally:
        store.close()


def retimed(envelopes: list[pb.EventEnvelope], times: list[datetime]) -> list[pb.EventEnvelope]:
    """The envelopes with their RoundEnded events stamped at ``times``, in turn."""
    out, stamps = [], iter(times)
    for item in envelopes:
        copy = pb.EventEnvelope()
        copy.CopyFrom(item)
        if item.type.endswith("RoundEnded"):
            copy.time = next(stamps).isoformat()
        out.append(copy)
    return out


def test_points_windows_split_at_the_week_and_month_boundary(
    events_store: EventStore, scoring_url: str
) -> None:
    sunday = datetime(2026, 11, 29, 23, 59, 59, 999999, tzinfo=UTC)
    monday = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)
    month_end = datetime(2026, 11, 30, 23, 59, 59, 999999, tzinfo=UTC)
    december = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
    times = [sunday, monday, month_end, december]
    players = ["erin", "finn", "gus", "bot:basic:1"]
    envelopes = retimed(bot_games(events_store, "windows", players, games=2), times)
    rounds = [
        codec.decode(item.type, item.payload)
        for item in envelopes
        if item.type.endswith("RoundEnded")
    ]
    assert len(rounds) == len(times)
    store = ScoringStore(scoring_url)
    try:
        for item in envelopes:
            store.apply(item)
        points = {p: [int(r.points[s]) for r in rounds] for s, p in enumerate(players)}

        def board(when: datetime, window: str) -> dict[str, int]:
            found = store.ratings.board("house", "points", period(window, when).key, 0, 10)
            return {entry.account: entry.points for entry in found.entries}

        def total(*indexes: int) -> dict[str, int]:
            return {p: sum(points[p][i] for i in indexes) for p in players[:3]}  # no bots

        assert board(sunday, "week") == total(0)
        assert board(monday, "week") == total(1, 2, 3) == board(december, "week")
        assert board(sunday, "month") == total(0, 1, 2) == board(month_end, "month")
        assert board(december, "month") == total(3)
        assert board(december, "all") == total(0, 1, 2, 3)
    finally:
        store.close()


def _after_round(envelopes: list[pb.EventEnvelope], count: int) -> int:
    seen = 0
    for index, item in enumerate(envelopes):
        if item.type.endswith("RoundEnded"):
            seen += 1
            if seen == count:
                return index + 1
    raise AssertionError("too few rounds")


def test_equal_values_share_a_rank_and_the_players_around_an_account(
    events_store: EventStore, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ties.db'}"
    migrate(url)
    engine = create_engine(url)
    values = {"a": 9, "b": 7, "c": 7, "d": 7, "e": 3, "f": 1}
    with engine.begin() as connection:
        connection.execute(
            ratings_schema.ratings_points.insert(),
            [
                {"preset": "club", "period": "all", "account": k, "points": v}
                for k, v in values.items()
            ],
        )
    engine.dispose()
    store = ScoringStore(url)
    try:
        whole = store.ratings.board("club", "points", "all", 0, 10)
        assert [(e.rank, e.account) for e in whole.entries] == [
            (1, "a"),
            (2, "b"),
            (2, "c"),
            (2, "d"),
            (5, "e"),
            (6, "f"),
        ]
        page = store.ratings.board("club", "points", "all", 2, 2)
        assert [(e.rank, e.account, e.position) for e in page.entries] == [(2, "c", 2), (2, "d", 3)]
        near = store.ratings.board("club", "points", "all", 0, 1, account="d", around=1)
        assert near.own is not None and (near.own.rank, near.own.position) == (2, 3)
        assert [(e.rank, e.account) for e in near.around] == [(2, "c"), (2, "d"), (5, "e")]
        top = store.ratings.board("club", "points", "all", 0, 1, account="a", around=2)
        assert [e.account for e in top.around] == ["a", "b", "c"]
        assert whole.total == 6
    finally:
        store.close()


async def test_a_failed_ratings_write_is_never_acknowledged(
    events_store: EventStore, tmp_path: Path
) -> None:
    envelopes = bot_games(events_store, "broken", ["hal", "ivy", "bot:basic:1"], games=1)
    url = f"sqlite:///{tmp_path / 'broken.db'}"
    migrate(url)
    store = ScoringStore(url)
    consumer = Consumer(store, FakeHistory(envelopes), "scoring")
    engine = create_engine(url)
    try:
        round_end = _after_round(envelopes, 1)
        assert await consumer.apply_all(envelopes[: round_end - 1]) == [True] * (round_end - 1)
        with engine.begin() as connection:
            connection.execute(text("ALTER TABLE ratings_skills RENAME TO ratings_skills_away"))
        assert await consumer.apply_all([envelopes[round_end - 1]]) == [False]
        assert store.progress("table-broken") == envelopes[round_end - 2].version
        assert not store.ratings.known("hal")
        with engine.begin() as connection:
            connection.execute(text("ALTER TABLE ratings_skills_away RENAME TO ratings_skills"))
        assert await consumer.apply_all(envelopes[round_end - 1 :]) == [True] * (
            len(envelopes) - round_end + 1
        )
        assert store.ratings.skills("hal")["house"].rounds == 2
    finally:
        engine.dispose()
        store.close()
