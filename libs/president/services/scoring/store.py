"""Scoring's own database: the read models and the exactly-once progress per table stream.

Each envelope is applied in one transaction: lock the stream's progress row;
skip the envelope if its version is not past the progress (a redelivery or a
duplicate changes nothing); report a gap if it is more than one past;
otherwise update the read models and the progress together. Tables are
those of migration 0003 (``president.store.migrate`` creates them).

A rewound history (a database that failed over to a standby without its last
commits gives those versions to new events): the progress keeps the hash of
the last event applied, and what each table added to each player
(``scoring_table_players``, migration 0012). An event at the progress's
version that is not the one applied there, or the next one that does not
follow it, is :data:`SUSPECT` (the consumer also suspects an event the stream
brings at or below a version it brought before); the consumer asks the store, and if
the store no longer holds the event applied last, :meth:`ScoringStore.forget_table`
takes the table out of every read model (its share of each player's
statistics, its ratings) and its events are applied again from the store.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    delete,
    insert,
    select,
    update,
)

from president import codec
from president.events.v1 import events_pb2 as pb
from president.hosting.events import TableCreated
from president.hosting.streams import stream_id, table_id_of
from president.servicekit.follower import AHEAD, SEEN, Gap, place
from president.services.scoring.ratings_queries import RatingsQueries
from president.services.scoring.ratings_writes import RatingsBatch
from president.services.scoring.ratings_writes import forget_table as forget_ratings
from president.services.scoring.readmodels import (
    GameRecord,
    PlayerDelta,
    PlayerStats,
    TableModel,
    created,
    project,
)
from president.services.scoring.sql import READ, insert_ignore
from president.store import create_store_engine

metadata = MetaData()
scoring_progress = Table(
    "scoring_progress",
    metadata,
    Column("stream_id", String(200), primary_key=True),
    Column("version", Integer, nullable=False),
    Column("hash", String(64), nullable=True),
)
scoring_tables = Table(
    "scoring_tables",
    metadata,
    Column("table_id", String(64), primary_key=True),
    Column("game_no", Integer, nullable=False),
    Column("rounds_played", Integer, nullable=False),
    Column("totals", Text, nullable=False),
    Column("last_standings", Text, nullable=False),
    Column("players", Text, nullable=False),
    Column("version", Integer, nullable=False),
)
scoring_games = Table(
    "scoring_games",
    metadata,
    Column("table_id", String(64), primary_key=True),
    Column("game_no", Integer, primary_key=True),
    Column("winners", Text, nullable=False),
    Column("winner_player_ids", Text, nullable=False),
    Column("stopped", Boolean, nullable=False),
    Column("totals", Text, nullable=False),
    Column("rounds", Integer, nullable=False),
)
scoring_players = Table(
    "scoring_players",
    metadata,
    Column("player_id", String(200), primary_key=True),
    Column("rounds_played", Integer, nullable=False),
    Column("rounds_won", Integer, nullable=False),
    Column("games_played", Integer, nullable=False),
    Column("games_won", Integer, nullable=False),
    Column("points", BigInteger, nullable=False),
    Column("places", Text, nullable=False),
)

scoring_table_players = Table(
    "scoring_table_players",
    metadata,
    Column("table_id", String(64), primary_key=True),
    Column("player_id", String(200), primary_key=True),
    Column("rounds_played", Integer, nullable=False),
    Column("rounds_won", Integer, nullable=False),
    Column("games_played", Integer, nullable=False),
    Column("games_won", Integer, nullable=False),
    Column("points", BigInteger, nullable=False),
    Column("places", Text, nullable=False),
)

APPLIED = "applied"
SKIPPED = "skipped"
#: An event that may belong to a rewound history (the consumer asks the store).
SUSPECT = "suspect"
MAX_PLAYER_ID = 200

# Built once: a batch runs them many times (executemany where it can), and
# building SQLAlchemy statements per row cost scoring most of its CPU.
_PROGRESS_FOR_UPDATE = (
    select(scoring_progress.c.version, scoring_progress.c.hash)
    .where(scoring_progress.c.stream_id == bindparam("stream_id"))
    .with_for_update()
)
_READ_TABLE = select(scoring_tables).where(scoring_tables.c.table_id == bindparam("table_id"))
_TABLE_FIELDS = ("game_no", "rounds_played", "totals", "last_standings", "players", "version")
_UPDATE_TABLE = (
    update(scoring_tables)
    .where(scoring_tables.c.table_id == bindparam("key_table_id"))
    .values({name: bindparam(name) for name in _TABLE_FIELDS})
)
_UPDATE_PROGRESS = (
    update(scoring_progress)
    .where(scoring_progress.c.stream_id == bindparam("key_stream_id"))
    .values(version=bindparam("version"), hash=bindparam("hash"))
)
_PLAYERS_FOR_UPDATE = (
    select(scoring_players)
    .where(scoring_players.c.player_id.in_(bindparam("player_ids", expanding=True)))
    .order_by(scoring_players.c.player_id)
    .with_for_update()
)
_PLAYER_FIELDS = ("rounds_played", "rounds_won", "games_played", "games_won", "points", "places")
_UPDATE_PLAYER = (
    update(scoring_players)
    .where(scoring_players.c.player_id == bindparam("key_player_id"))
    .values({name: bindparam(name) for name in _PLAYER_FIELDS})
)
_SHARES_FOR_UPDATE = (
    select(scoring_table_players)
    .where(
        scoring_table_players.c.table_id.in_(bindparam("table_ids", expanding=True)),
        scoring_table_players.c.player_id.in_(bindparam("player_ids", expanding=True)),
    )
    .order_by(scoring_table_players.c.table_id, scoring_table_players.c.player_id)
    .with_for_update()
)
_UPDATE_SHARE = (
    update(scoring_table_players)
    .where(
        scoring_table_players.c.table_id == bindparam("key_table_id"),
        scoring_table_players.c.player_id == bindparam("key_player_id"),
    )
    .values({name: bindparam(name) for name in _PLAYER_FIELDS})
)


class BrokenStream(ValueError):
    """A stream whose events cannot be read models (it does not begin with TableCreated)."""


def _dump(values: Sequence[object] | dict[str, Any]) -> str:
    return json.dumps(values, separators=(",", ":"))


class ScoringStore:
    """The read models in scoring's database."""

    def __init__(self, url: str) -> None:
        self._engine = create_store_engine(url)
        self.ratings = RatingsQueries(self._engine)

    def close(self) -> None:
        self._engine.dispose()

    # -- applying events --------------------------------------------------------------

    def progress(self, stream_id: str) -> int:
        """The last version applied of a stream (0: none)."""
        return self.last_applied(stream_id)[0]

    def last_applied(self, stream_id: str) -> tuple[int, str]:
        """The version and hash of the last event applied of a stream ((0, ""): none; the
        hash is empty for one applied before migration 0012)."""
        with self._engine.connect().execution_options(**READ) as connection:
            row = connection.execute(
                select(scoring_progress.c.version, scoring_progress.c.hash).where(
                    scoring_progress.c.stream_id == stream_id
                )
            ).first()
        return (0, "") if row is None else (int(row.version), row.hash or "")

    def forget_table(self, table_id: str) -> None:
        """Take a table out of every read model, as if it was never seen: its share of each
        player's statistics, its standings, games and ratings, and its progress (its history
        was rewound; its events are then applied again from the store)."""
        stream = stream_id(table_id)
        with self._engine.begin() as connection:
            connection.execute(_PROGRESS_FOR_UPDATE, {"stream_id": stream}).first()
            shares = {
                row.player_id: _player_from(row)
                for row in connection.execute(
                    select(scoring_table_players)
                    .where(scoring_table_players.c.table_id == table_id)
                    .order_by(scoring_table_players.c.player_id)
                ).all()
            }
            if shares:
                rows = connection.execute(_PLAYERS_FOR_UPDATE, {"player_ids": sorted(shares)}).all()
                updates = []
                for row in rows:
                    values = _player_values(_player_from(row).without(shares[row.player_id]))
                    values["key_player_id"] = values.pop("player_id")
                    updates.append(values)
                if updates:
                    connection.execute(_UPDATE_PLAYER, updates)
            for table in (scoring_table_players, scoring_games, scoring_tables):
                connection.execute(delete(table).where(table.c.table_id == table_id))
            connection.execute(
                delete(scoring_progress).where(scoring_progress.c.stream_id == stream)
            )
            forget_ratings(connection, table_id)

    def apply(self, envelope: pb.EventEnvelope) -> str | Gap:
        """Apply one event exactly once: APPLIED, SKIPPED (seen before) or a :class:`Gap`."""
        return self.apply_batch([envelope])[0]

    def apply_batch(self, envelopes: Sequence[pb.EventEnvelope]) -> list[str | Gap]:
        """Apply events in order, in one transaction: each APPLIED, SKIPPED or a :class:`Gap`.

        The read models and the progress of every stream move together, so a
        crash keeps all of the batch or none of it. Raises (and writes
        nothing) if an event cannot be applied; the caller then applies the
        batch one by one to find it.
        """
        with self._engine.begin() as connection:
            batch = _Batch(connection)
            results = [batch.apply(envelope) for envelope in envelopes]
            batch.flush()
        return results

    # -- queries ----------------------------------------------------------------------

    def table(self, table_id: str) -> TableModel | None:
        """A table's standings model, if the table is known."""
        with self._engine.connect().execution_options(**READ) as connection:
            return _read_table(connection, table_id)

    def games(self, table_id: str) -> list[GameRecord]:
        """A table's finished games, oldest first."""
        with self._engine.connect().execution_options(**READ) as connection:
            rows = connection.execute(
                select(scoring_games)
                .where(scoring_games.c.table_id == table_id)
                .order_by(scoring_games.c.game_no)
            ).all()
        return [
            GameRecord(
                table_id=table_id,
                game_no=row.game_no,
                winners=tuple(json.loads(row.winners)),
                winner_player_ids=tuple(json.loads(row.winner_player_ids)),
                stopped=bool(row.stopped),
                totals=tuple(json.loads(row.totals)),
                rounds=row.rounds,
            )
            for row in rows
        ]

    def player(self, player_id: str) -> PlayerStats | None:
        """A player's statistics, if the player was ever seen."""
        with self._engine.connect().execution_options(**READ) as connection:
            row = connection.execute(
                select(scoring_players).where(scoring_players.c.player_id == player_id)
            ).first()
        return None if row is None else _player_from(row)


def _player_values(stats: PlayerStats) -> dict[str, Any]:
    return {
        "player_id": stats.player_id,
        "rounds_played": stats.rounds_played,
        "rounds_won": stats.rounds_won,
        "games_played": stats.games_played,
        "games_won": stats.games_won,
        "points": stats.points,
        "places": _dump(stats.places),
    }


def _player_from(row: Any) -> PlayerStats:
    return PlayerStats(
        player_id=row.player_id,
        rounds_played=row.rounds_played,
        rounds_won=row.rounds_won,
        games_played=row.games_played,
        games_won=row.games_won,
        points=int(row.points),
        places=tuple(json.loads(row.places)),
    )


def _read_table(connection: Connection, table_id: str) -> TableModel | None:
    row = connection.execute(_READ_TABLE, {"table_id": table_id}).first()
    if row is None:
        return None
    players = json.loads(row.players)
    return TableModel(
        table_id=table_id,
        game_no=row.game_no,
        rounds_played=row.rounds_played,
        totals=tuple(json.loads(row.totals)),
        last_standings=tuple(json.loads(row.last_standings)),
        seated=tuple(players["seated"]),
        last_round=tuple(players["last_round"]),
        version=row.version,
    )


class _Batch:
    """The work of one transaction: progress rows locked once, models written once."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._progress: dict[str, int] = {}
        self._hashes: dict[str, str] = {}
        self._suspect: set[str] = set()
        self._moved: set[str] = set()
        self._models: dict[str, TableModel] = {}
        self._new_tables: set[str] = set()
        self._games: dict[tuple[str, int], GameRecord] = {}
        self._deltas: dict[str, list[PlayerDelta]] = {}
        self._shares: dict[tuple[str, str], list[PlayerDelta]] = {}
        self._ratings = RatingsBatch(connection)

    def _locked_progress(self, stream_id: str) -> int:
        if stream_id in self._progress:
            return self._progress[stream_id]
        key = {"stream_id": stream_id}
        row = self._connection.execute(_PROGRESS_FOR_UPDATE, key).first()
        if row is None:
            insert_ignore(self._connection, scoring_progress, {**key, "version": 0, "hash": ""})
            row = self._connection.execute(_PROGRESS_FOR_UPDATE, key).one()
        self._progress[stream_id] = int(row.version)
        self._hashes[stream_id] = row.hash or ""
        return int(row.version)

    def _model(self, table_id: str, stream_id: str) -> TableModel:
        model = self._models.get(table_id)
        if model is None:
            model = _read_table(self._connection, table_id)
            if model is None:
                raise BrokenStream(f"{stream_id} has progress but no table row")
        return model

    def apply(self, envelope: pb.EventEnvelope) -> str | Gap:
        stream_id = envelope.stream_id
        table_id = table_id_of(stream_id)
        progress = self._locked_progress(stream_id)
        if table_id in self._suspect:
            return SUSPECT  # not applied on models a rewound history may have left
        where = place(progress, envelope.version)
        last = self._hashes[stream_id]
        if where is SEEN:
            if last and envelope.version == progress and envelope.hash != last:
                self._suspect.add(table_id)
                return SUSPECT  # another event than the one applied last at its version
            return SKIPPED
        if where is AHEAD:
            return Gap(table_id, progress)
        if last and envelope.previous_hash and envelope.previous_hash != last:
            self._suspect.add(table_id)
            return SUSPECT  # it does not follow the event applied last
        event = codec.decode(envelope.type, envelope.payload)
        if progress == 0:
            if not isinstance(event, TableCreated):
                raise BrokenStream(f"{stream_id} begins with {envelope.type}")
            self._models[table_id] = created(event, table_id)
            self._new_tables.add(table_id)
            self._ratings.observe(
                stream_id, envelope.version, envelope.time, event, self._models[table_id]
            )
        else:
            change = project(self._model(table_id, stream_id), event, envelope.version)
            self._models[table_id] = change.table
            self._ratings.observe(stream_id, envelope.version, envelope.time, event, change.table)
            if change.game is not None:
                self._games[(table_id, change.game.game_no)] = change.game
            for delta in change.players:
                if len(delta.player_id) <= MAX_PLAYER_ID:
                    self._deltas.setdefault(delta.player_id, []).append(delta)
                    self._shares.setdefault((table_id, delta.player_id), []).append(delta)
        self._progress[stream_id] = envelope.version
        self._hashes[stream_id] = envelope.hash
        self._moved.add(stream_id)
        return APPLIED

    def flush(self) -> None:
        """Write what the batch changed (players in id order: replicas lock them alike)."""
        connection = self._connection
        new_tables, known_tables = [], []
        for table_id, model in self._models.items():
            values = {
                "game_no": model.game_no,
                "rounds_played": model.rounds_played,
                "totals": _dump(model.totals),
                "last_standings": _dump(model.last_standings),
                "players": _dump({"seated": model.seated, "last_round": model.last_round}),
                "version": model.version,
            }
            if table_id in self._new_tables:
                new_tables.append({"table_id": table_id, **values})
            else:
                known_tables.append({"key_table_id": table_id, **values})
        if new_tables:
            connection.execute(insert(scoring_tables), new_tables)
        if known_tables:
            connection.execute(_UPDATE_TABLE, known_tables)
        for game in self._games.values():
            self._write_game(game)
        if self._deltas:
            self._add_to_players()
            self._add_to_shares()
        self._ratings.flush()
        if self._moved:
            connection.execute(
                _UPDATE_PROGRESS,
                [
                    {
                        "key_stream_id": stream_id,
                        "version": self._progress[stream_id],
                        "hash": self._hashes[stream_id],
                    }
                    for stream_id in sorted(self._moved)
                ],
            )

    def _write_game(self, game: GameRecord) -> None:
        values = {
            "winners": _dump(game.winners),
            "winner_player_ids": _dump(game.winner_player_ids),
            "stopped": game.stopped,
            "totals": _dump(game.totals),
            "rounds": game.rounds,
        }
        key = {"table_id": game.table_id, "game_no": game.game_no}
        insert_ignore(self._connection, scoring_games, {**key, **values})
        self._connection.execute(
            update(scoring_games)
            .where(
                scoring_games.c.table_id == game.table_id,
                scoring_games.c.game_no == game.game_no,
            )
            .values(**values)
        )

    def _add_to_players(self) -> None:
        """Add the batch's deltas to each player's statistics (rows locked in id order)."""
        connection = self._connection
        player_ids = sorted(self._deltas)
        insert_ignore(
            connection,
            scoring_players,
            [_player_values(PlayerStats(player_id)) for player_id in player_ids],
        )
        rows = connection.execute(_PLAYERS_FOR_UPDATE, {"player_ids": player_ids}).all()
        updates = []
        for row in rows:
            stats = _player_from(row)
            for delta in self._deltas[stats.player_id]:
                stats = stats.add(delta)
            values = _player_values(stats)
            values["key_player_id"] = values.pop("player_id")
            updates.append(values)
        connection.execute(_UPDATE_PLAYER, updates)

    def _add_to_shares(self) -> None:
        """Add the batch's deltas to each table's share of each player's statistics (what
        :meth:`ScoringStore.forget_table` takes out of them again). One read of the rows for
        the batch's tables and players, locked in key order."""
        connection = self._connection
        keys = sorted(self._shares)
        insert_ignore(
            connection,
            scoring_table_players,
            [
                {"table_id": table_id, **_player_values(PlayerStats(player_id))}
                for table_id, player_id in keys
            ],
        )
        rows = connection.execute(
            _SHARES_FOR_UPDATE,
            {
                "table_ids": sorted({table_id for table_id, _ in keys}),
                "player_ids": sorted({player_id for _, player_id in keys}),
            },
        ).all()
        updates = []
        for row in rows:
            deltas = self._shares.get((row.table_id, row.player_id))
            if deltas is None:  # another table's row for the same player
                continue
            stats = _player_from(row)
            for delta in deltas:
                stats = stats.add(delta)
            values = _player_values(stats)
            values["key_player_id"] = values.pop("player_id")
            values["key_table_id"] = row.table_id
            updates.append(values)
        connection.execute(_UPDATE_SHARE, updates)
