"""Scoring's read models without NATS: the projection, the exactly-once store on real
SQLite and PostgreSQL, and the consumer's gap filling (with a fake of our own history port)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from president import codec
from president.events.v1 import events_pb2 as pb
from president.hosting import events as ev
from president.hosting.dealer import LocalDealer
from president.hosting.host import TableHost
from president.hosting.projection import fold, table_from_created
from president.hosting.streams import stream_id
from president.rules import game as g
from president.rules import round as rnd
from president.rules.options import options_for
from president.servicekit.follower import Gap
from president.servicekit.nats import envelope
from president.services.scoring.consumer import Consumer
from president.services.scoring.store import APPLIED, SKIPPED, ScoringStore
from president.store import EventStore, migrate

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer


@pytest.fixture(scope="module")
def events_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EventStore]:
    path = tmp_path_factory.mktemp("scoring-events") / "events.db"
    with EventStore.from_url(f"sqlite:///{path}", migrate=True) as store:
        yield store


@pytest.fixture(params=["sqlite", "postgres"])
def scoring_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'scoring.db'}"
        migrate(url)
        yield url
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.create_database("scoring")
    migrate(url)
    try:
        yield url
    finally:
        server.drop_database(url)


def bot_games(
    store: EventStore, table_id: str, players: list[str], games: int
) -> list[pb.EventEnvelope]:
    """Bot games at a table through TableHost; the table's envelopes."""
    host = TableHost(store, LocalDealer(secret_for=lambda key: bytes([key.round_no]) * 32))
    host.create(table_id, options_for("house", {"game_end": "rounds:2"}), seat_count=len(players))
    for seat, player in enumerate(players):
        host.decide_and_append(
            table_id, g.SitDown(seat, player, True), f"{table_id}-sit-{seat}", "server"
        )
    host.decide_and_append(table_id, g.StartGame(), f"{table_id}-start", "server")
    for game in range(games):
        if game:
            host.decide_and_append(table_id, g.PlayAgain(), f"{table_id}-again-{game}", "server")
        while host.load(table_id).game.phase == g.GamePhase.BETWEEN_ROUNDS:
            version = host.load(table_id).version
            host.decide_and_append(table_id, g.NextRound(), f"{table_id}-next-{version}", "server")
    return [envelope(stored) for stored in store.read_stream(stream_id(table_id))]


def expected_stats(envelopes: list[pb.EventEnvelope]) -> dict[str, dict[str, object]]:
    """Players' statistics computed by folding the events through the engine."""
    table = None
    stats: dict[str, dict[str, object]] = {}
    for item in envelopes:
        event = codec.decode(item.type, item.payload)
        if table is None:
            assert isinstance(event, ev.TableCreated)
            table = table_from_created(event)
            continue
        seats = [seat.player for seat in table.game.seats]
        if isinstance(event, rnd.RoundEnded):
            for place, seat in enumerate(event.standings):
                player = seats[seat]
                assert player is not None
                row = stats.setdefault(player, {"rounds": 0, "won": 0, "points": 0, "places": {}})
                row["rounds"] = int(row["rounds"]) + 1  # type: ignore[call-overload]
                row["won"] = int(row["won"]) + (place == 0)  # type: ignore[call-overload]
                row["points"] = int(row["points"]) + event.points[seat]  # type: ignore[call-overload]
                places = row["places"]
                assert isinstance(places, dict)
                places[place] = places.get(place, 0) + 1
        table = fold(table, event, item.version)
    return stats


def test_projection_follows_the_engine(events_store: EventStore, tmp_path: Path) -> None:
    envelopes = bot_games(events_store, "proj", ["a", "b", "c", "d"], games=2)
    url = f"sqlite:///{tmp_path / 'scoring.db'}"
    migrate(url)
    store = ScoringStore(url)
    try:
        assert [store.apply(item) for item in envelopes] == [APPLIED] * len(envelopes)
        ended = [
            codec.decode(i.type, i.payload) for i in envelopes if i.type.endswith("RoundEnded")
        ]
        last = ended[-1]
        assert isinstance(last, rnd.RoundEnded)
        model = store.table("proj")
        assert model is not None
        assert (model.game_no, model.rounds_played, model.totals) == (2, 2, last.totals)
        assert model.last_standings == last.standings
        assert model.version == envelopes[-1].version
        games = store.games("proj")
        assert [game.game_no for game in games] == [1, 2]
        assert all(not game.stopped and game.rounds == 2 for game in games)
        assert games[-1].totals == last.totals
        assert games[-1].winners == last.winners
        for player, want in expected_stats(envelopes).items():
            stats = store.player(player)
            assert stats is not None
            assert stats.rounds_played == want["rounds"] == 4
            assert stats.rounds_won == want["won"]
            assert stats.points == want["points"]
            places = want["places"]
            assert isinstance(places, dict)
            assert {i: n for i, n in enumerate(stats.places) if n} == places
            assert stats.games_played == 2
            wins = sum(1 for game in games if player in game.winner_player_ids)
            assert stats.games_won == wins
    finally:
        store.close()


def test_each_event_counts_once_and_gaps_are_reported(
    events_store: EventStore, scoring_url: str
) -> None:
    envelopes = bot_games(events_store, "once", ["a", "b", "c"], games=1)
    store = ScoringStore(scoring_url)
    try:
        for item in envelopes[:10]:
            assert store.apply(item) == APPLIED
        before = (store.table("once"), store.player("a"))
        for item in envelopes[:10]:
            assert store.apply(item) == SKIPPED
        assert store.apply(envelopes[12]) == Gap("once", 10)
        assert (store.table("once"), store.player("a")) == before
        assert store.progress("table-once") == 10
        for item in envelopes[10:]:
            assert store.apply(item) == APPLIED
        for item in envelopes:
            assert store.apply(item) == SKIPPED
        stats = store.player("a")
        assert stats is not None
        assert stats.rounds_played == 2
        assert stats.games_played == 1
    finally:
        store.close()


class FakeHistory:
    """Our own history port: the table's events from a list."""

    def __init__(self, envelopes: list[pb.EventEnvelope]) -> None:
        self.envelopes = envelopes
        self.calls: list[tuple[str, int, int]] = []

    async def read_events(
        self, table_id: str, after_version: int, limit: int = 0
    ) -> list[pb.EventEnvelope]:
        self.calls.append((table_id, after_version, limit))
        found = [e for e in self.envelopes if e.version > after_version]
        return found[:limit] if limit else found


async def test_consumer_fills_gaps_from_the_table_service(
    events_store: EventStore, tmp_path: Path
) -> None:
    envelopes = bot_games(events_store, "gappy", ["a", "b", "c"], games=1)
    url = f"sqlite:///{tmp_path / 'scoring.db'}"
    migrate(url)
    store = ScoringStore(url)
    history = FakeHistory(envelopes)
    consumer = Consumer(store, history, "scoring")
    try:
        batch: list[pb.EventEnvelope | None] = [envelopes[0], envelopes[5], envelopes[6], None]
        assert await consumer.apply_all(batch) == [True, True, True, True]
        assert history.calls == [("gappy", 1, 4)]
        assert store.progress("table-gappy") == 7
        assert await consumer.apply_all(envelopes) == [True] * len(envelopes)
        assert store.progress("table-gappy") == envelopes[-1].version
        assert consumer.applied == len(envelopes)
    finally:
        store.close()


async def test_consumer_retries_when_the_gap_cannot_be_filled(
    events_store: EventStore, tmp_path: Path
) -> None:
    envelopes = bot_games(events_store, "nohistory", ["a", "b", "c"], games=1)
    url = f"sqlite:///{tmp_path / 'scoring.db'}"
    migrate(url)
    store = ScoringStore(url)

    class Down:
        async def read_events(
            self, table_id: str, after_version: int, limit: int = 0
        ) -> list[pb.EventEnvelope]:
            raise ConnectionError("table service away")

    consumer = Consumer(store, Down(), "scoring")
    try:
        assert await consumer.apply_all([envelopes[0], envelopes[3]]) == [True, False]
        assert store.progress("table-nohistory") == 1
    finally:
        store.close()


def test_batches_give_the_same_read_models_as_single_events(
    events_store: EventStore, scoring_url: str, tmp_path: Path
) -> None:
    first = bot_games(events_store, "batch1", ["a", "b", "c", "d"], games=2)
    second = bot_games(events_store, "batch2", ["a", "e", "f"], games=1)
    mixed = [item for pair in zip(first, second, strict=False) for item in pair]
    mixed += first[len(second) :]
    single_url = f"sqlite:///{tmp_path / 'single.db'}"
    migrate(single_url)
    single, batched = ScoringStore(single_url), ScoringStore(scoring_url)
    try:
        for item in mixed:
            assert single.apply(item) == APPLIED
        for start in range(0, len(mixed), 7):
            chunk = mixed[start : start + 7]
            assert batched.apply_batch(chunk) == [APPLIED] * len(chunk)
        assert batched.apply_batch(mixed[:50]) == [SKIPPED] * 50
        for table_id in ("batch1", "batch2"):
            assert batched.table(table_id) == single.table(table_id)
            assert batched.games(table_id) == single.games(table_id)
        for player in "abcdef":
            assert batched.player(player) == single.player(player)
    finally:
        single.close()
        batched.close()
