"""The public commitment feed: published once per commitment, and what it catches.

The table service's consumer publishes each ``DealCommitted`` in the feed;
an insider who later stores another history for a round (another secret and
fingerprint, every hash of the table's log recomputed) passes the log's own
audit, but not the feed. One who rewrites the feed too, with its chain
recomputed, is caught by a copy someone archived.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, update
from typer.testing import CliRunner

from president import audit
from president.audit import commitments
from president.cli.main import app
from president.hosting.dealer import LocalDealer, RoundKey
from president.hosting.host import TableHost
from president.hosting.streams import stream_id
from president.play.offline import round_secret
from president.play.recorded import GAME_START, GameClock, record_bot_game
from president.rules.options import options_for
from president.services.table.commitments import CommitmentPublisher
from president.store import EventStore, migrate
from president.store.commitments import commitment_feed, entry_hash, read_feed
from tests.support.recorded_games import PRESET_PLAYERS, rewrite, rows

runner = CliRunner()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        made = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        made = request.getfixturevalue("postgres_url")
    migrate(made)
    return made


@pytest.fixture
def store(url: str) -> Iterator[EventStore]:
    opened = EventStore.from_url(url)
    yield opened
    opened.close()


def house_game(
    store: EventStore,
    table_id: str,
    later_seed: int | None = None,
    start: datetime = GAME_START,
) -> str:
    """Two rounds of house; with ``later_seed`` the second round's secret comes from it."""

    def secret_for(key: RoundKey) -> bytes:
        seed = 5 if key.round_no == 1 or later_seed is None else later_seed
        return round_secret(seed, key.game_no, key.round_no)

    clock = GameClock(start)
    host = TableHost(store, LocalDealer(secret_for=secret_for), clock=clock)
    options = options_for("house")
    return record_bot_game(
        host, options, PRESET_PLAYERS["house"], rounds=2, table_id=table_id, clock=clock
    )


def logs(store: EventStore, *tables: str) -> list[list]:  # type: ignore[type-arg]
    return [store.read_stream(stream_id(table)) for table in tables]


def test_each_commitment_is_published_once_in_order(store: EventStore, url: str) -> None:
    tables = [house_game(store, f"t{n}-{url[:6]}") for n in range(2)]
    publisher = CommitmentPublisher(store)
    assert publisher.refresh() > 0
    assert publisher.refresh() == 0  # nothing new: nothing published twice
    feed = read_feed(store.engine)
    committed = [
        (e.stream_id, e.version)
        for events in logs(store, *tables)
        for e in events
        if e.type.endswith("DealCommitted")
    ]
    assert [(f.commitment.stream_id, f.commitment.version) for f in feed][-4:] == committed
    assert commitments.check_feed(feed, logs(store, *tables)) is None
    assert commitments.unpublished(feed, logs(store, *tables)) == []


def test_a_replaced_round_is_caught_by_the_feed(
    store: EventStore, url: str, tmp_path: Path
) -> None:
    table = house_game(store, f"real-{url[:6]}")
    CommitmentPublisher(store).refresh()
    # The insider's alternative: the same table, round 2 dealt from another secret.
    other_url = f"sqlite:///{tmp_path / 'other.db'}"
    migrate(other_url)
    with EventStore.from_url(other_url) as other:
        house_game(other, table, later_seed=9)
        alternative = rows(other.engine, stream_id(table))
    rewrite(store.engine, stream_id(table), lambda _: alternative)
    (forged,) = logs(store, table)
    assert audit.verify_table(forged).ok  # the log alone cannot tell

    problem = commitments.check_feed(read_feed(store.engine), [forged])
    assert problem is not None
    print(problem)
    second = [e for e in forged if e.type.endswith("DealCommitted")][1]
    assert (problem.version, problem.event_type) == (second.version, "DealCommitted")
    assert "the round's deal was replaced after the fact" in problem.reason


def test_a_rewritten_feed_is_caught_by_its_chain_or_an_archive(
    store: EventStore, url: str, tmp_path: Path
) -> None:
    table = house_game(store, f"arch-{url[:6]}")
    CommitmentPublisher(store).refresh()
    feed = read_feed(store.engine)
    archive = tmp_path / "feed.json"
    archive.write_text(commitments.archive_json(feed))
    target = feed[-1]

    # Careless: one entry's fingerprint changed, the hashes left.
    with store.engine.begin() as connection:
        connection.execute(
            update(commitment_feed)
            .where(commitment_feed.c.seq == target.seq)
            .values(fingerprint="ab" * 32)
        )
    problem = commitments.check_feed(read_feed(store.engine), logs(store, table))
    assert problem is not None and problem.version == target.seq
    assert "the entry was changed" in problem.reason

    # Careful: the entry's hash recomputed too (it is the last one: nothing links to it).
    changed = read_feed(store.engine)[-1]
    with store.engine.begin() as connection:
        connection.execute(
            update(commitment_feed)
            .where(commitment_feed.c.seq == target.seq)
            .values(hash=entry_hash(changed.seq, changed.commitment, changed.previous_hash))
        )
    rewritten = read_feed(store.engine)
    assert commitments.check_feed(rewritten, []) is None  # the feed alone holds
    kept = commitments.load_archive(archive)
    problem = commitments.check_feed(rewritten, [], [(str(archive), kept)])
    assert problem is not None and problem.version == target.seq
    assert "differs from" in problem.reason and "in the archived copy" in problem.reason

    with store.engine.begin() as connection:
        connection.execute(delete(commitment_feed).where(commitment_feed.c.seq == target.seq))
    problem = commitments.check_feed(read_feed(store.engine), [], [(str(archive), kept)])
    assert problem is not None and "entries were removed" in problem.reason


def test_the_commitments_command(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"  # a store of its own: nothing else tampered with
    migrate(url)
    with EventStore.from_url(url) as store:
        table = house_game(store, f"cli-{url[:6]}")
        CommitmentPublisher(store).refresh()
    exported = tmp_path / "feed.json"
    result = runner.invoke(app, ["audit", "commitments", "--db", url, "--export", str(exported)])
    assert result.exit_code == 0, result.stdout
    assert "OK:" in result.stdout
    entries = json.loads(exported.read_text())["entries"]
    assert any(e["stream_id"] == stream_id(table) for e in entries)
    result = runner.invoke(app, ["audit", "commitments", "--db", url, "--archive", str(exported)])
    assert result.exit_code == 0, result.stdout
    result = runner.invoke(app, ["audit", "commitments", "--db", url, "--archive", "nope.json"])
    assert result.exit_code == 2


def test_a_game_appended_after_the_fact_is_back_dated_in_the_feed(tmp_path: Path) -> None:
    """An insider appends a whole game to the log later, with times of the past: the feed
    publishes it when it is written, behind entries committed after those times."""
    url = f"sqlite:///{tmp_path / 'late.db'}"
    migrate(url)
    with EventStore.from_url(url) as store:
        publisher = CommitmentPublisher(store)
        real = house_game(store, "real", start=GAME_START + timedelta(days=1))
        publisher.refresh()
        assert commitments.backdated(read_feed(store.engine)) is None
        appended = house_game(store, "appended", start=GAME_START)
        publisher.refresh()
        feed = read_feed(store.engine)
        (forged,) = logs(store, appended)
        assert audit.verify_table(forged).ok  # the appended log is legal on its own
        assert commitments.check_feed(feed, logs(store, real, appended)) is None
    problem = commitments.backdated(feed)
    assert problem is not None
    print(problem)
    first_appended = next(e for e in feed if e.commitment.stream_id == stream_id(appended))
    assert problem.version == first_appended.seq
    assert "was written into its log later and back-dated" in problem.reason
    result = runner.invoke(app, ["audit", "commitments", "--db", url])
    assert result.exit_code == 1 and "back-dated" in result.stdout
