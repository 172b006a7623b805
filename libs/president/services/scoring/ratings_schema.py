"""The ratings read models' tables (migration 0008_ratings): their one SQLAlchemy description.

- ``ratings_tables``: each table's preset and whether its rounds count for
  ratings and leaderboards (``ranked``, the table option ``leaderboards``);
- ``ratings_games``: each game, when it started and ended, its winners;
- ``ratings_places``: each seat's place and points in each finished round,
  with the account's rating before and after it (ranked rounds only);
- ``ratings_skills``: each account's rating per preset;
- ``ratings_points``: each account's points per preset and window period;
- ``ratings_folds``: the last round folded into each preset's ratings.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, Float, Integer, MetaData, String, Table, Text

metadata = MetaData()
ratings_tables = Table(
    "ratings_tables",
    metadata,
    Column("table_id", String(64), primary_key=True),
    Column("preset", String(32), nullable=False),
    Column("ranked", Boolean, nullable=False),
)
ratings_games = Table(
    "ratings_games",
    metadata,
    Column("table_id", String(64), primary_key=True),
    Column("game_no", Integer, primary_key=True),
    Column("preset", String(32), nullable=False),
    Column("ranked", Boolean, nullable=False),
    Column("started_at", String(40), nullable=False),
    Column("ended_at", String(40), nullable=True),
    Column("stopped", Boolean, nullable=True),
    Column("winners", Text, nullable=False),
)
ratings_places = Table(
    "ratings_places",
    metadata,
    Column("table_id", String(64), primary_key=True),
    Column("game_no", Integer, primary_key=True),
    Column("round_no", Integer, primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column("account", String(200), nullable=False),
    Column("preset", String(32), nullable=False),
    Column("ranked", Boolean, nullable=False),
    Column("ended_key", String(300), nullable=False),
    Column("ended_at", String(40), nullable=False),
    Column("place", Integer, nullable=False),
    Column("points", Integer, nullable=False),
    Column("mu_before", Float, nullable=True),
    Column("sigma_before", Float, nullable=True),
    Column("mu_after", Float, nullable=True),
    Column("sigma_after", Float, nullable=True),
)
ratings_skills = Table(
    "ratings_skills",
    metadata,
    Column("preset", String(32), primary_key=True),
    Column("account", String(200), primary_key=True),
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("rounds", Integer, nullable=False),
    Column("conservative", Float, nullable=False),
)
ratings_points = Table(
    "ratings_points",
    metadata,
    Column("preset", String(32), primary_key=True),
    Column("period", String(32), primary_key=True),
    Column("account", String(200), primary_key=True),
    Column("points", BigInteger, nullable=False),
)
ratings_folds = Table(
    "ratings_folds",
    metadata,
    Column("preset", String(32), primary_key=True),
    Column("last_key", String(300), nullable=False),
)
#: Every ratings table, in an order they may be emptied in.
ALL = (ratings_folds, ratings_points, ratings_skills, ratings_places, ratings_games, ratings_tables)
