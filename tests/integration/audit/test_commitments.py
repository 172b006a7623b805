"""The public commitment feed: published once per commitment, and what it catches.

The table service's consumer publishes each ``DealCommitted`` in the feed;
an insider who later stores another history for a round (another secret and
fingerprint, every hash of the table's log recomputed) passes the log's own
audit, but not the feed. One who rewrites the feed too, with its chain
recomputed, is caught by a copy someone archived.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import nats
import pytest
from sqlalchemy import delete, update
from typer.testing import CliRunner

from president import audit
from president.audit import commitments
from president.audit.commitments import ArchivedFeed, load_archive
from president.cli.main import app
from president.hosting.dealer import LocalDealer, RoundKey
from president.hosting.host import TableHost
from president.hosting.signatures import Signer
from president.hosting.streams import stream_id
from president.play.offline import round_secret
from president.play.recorded import GAME_START, GameClock, record_bot_game
from president.rules.options import options_for
from president.servicekit.feed_stream import FeedSubjects, read_entries
from president.services.table.commitments import CommitmentPublisher
from president.services.table.feed_relay import FeedRelay, FeedStuck
from president.store import GENESIS_HASH, EventStore, migrate
from president.store.commitments import (
    FeedEntry,
    commitment_feed,
    entry_hash,
    entry_of,
    read_feed,
)
from tests.support.postgres import settle
from tests.support.recorded_games import PRESET_PLAYERS, rewrite, rows
from tests.support.servers import delete_stream

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


def sqlite_store(tmp_path: Path, name: str) -> str:
    """The URL of a fresh, migrated SQLite event store of the test's own."""
    url = f"sqlite:///{tmp_path / f'{name}.db'}"
    migrate(url)
    return url


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


def published(want: int, *publishers: CommitmentPublisher) -> int:
    """How many commitments the publishers publish, refreshing in turn until ``want`` or
    a few seconds. On PostgreSQL an event counts as committed once no transaction that
    began before it is still open, anywhere on the server (other tests' too)."""
    count = 0
    deadline = time.monotonic() + 10
    while count < want and time.monotonic() < deadline:
        count += sum(publisher.refresh() for publisher in publishers)
        if count < want:
            time.sleep(0.05)
    return count


def test_the_feed_reads_only_commitments_and_writes_only_when_it_publishes(
    store: EventStore, url: str
) -> None:
    """Events with no commitment move neither the tracked position nor the feed (no
    write transaction for nothing); two replicas' publishers publish each commitment
    once; a publisher started later looks again from the tracked position and finds
    nothing it missed."""
    CommitmentPublisher(store).refresh()  # what other tests left in this database
    first, second = CommitmentPublisher(store), CommitmentPublisher(store)
    house_game(store, f"a-{url[:6]}")
    assert published(2, first) == 2  # the game's two rounds
    tracked = store.tracked_position("commitment-feed")
    assert second.refresh() == 0  # the other replica published them already
    host = TableHost(store, LocalDealer())
    host.create(f"lobby-{url[:6]}", options_for("house"), seat_count=3, visibility="public")
    assert first.refresh() == 0 and second.refresh() == 0
    assert store.tracked_position("commitment-feed") == tracked  # nothing written
    house_game(store, f"b-{url[:6]}")
    assert published(2, second, first) == 2
    assert CommitmentPublisher(store).refresh() == 0  # a restart: nothing left behind
    ours = [
        (f.commitment.stream_id, f.commitment.version)
        for f in read_feed(store.engine)
        if f.commitment.stream_id in (stream_id(f"a-{url[:6]}"), stream_id(f"b-{url[:6]}"))
    ]
    assert len(ours) == len(set(ours)) == 4


def test_a_replaced_round_is_caught_by_the_feed(
    store: EventStore, url: str, tmp_path: Path
) -> None:
    table = house_game(store, f"real-{url[:6]}")
    CommitmentPublisher(settle(store)).refresh()
    # The insider's alternative: the same table, round 2 dealt from another secret.
    other_url = sqlite_store(tmp_path, "other")
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
    CommitmentPublisher(settle(store)).refresh()
    feed = read_feed(store.engine)
    archive = tmp_path / "feed.json"
    archive.write_text(commitments.archive_lines(feed))
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
    url = sqlite_store(tmp_path, "cli")  # a store of its own: nothing else tampered with
    with EventStore.from_url(url) as store:
        table = house_game(store, f"cli-{url[:6]}")
        CommitmentPublisher(settle(store)).refresh()
    exported = tmp_path / "feed.json"
    result = runner.invoke(app, ["audit", "commitments", "--db", url, "--export", str(exported)])
    assert result.exit_code == 0, result.stdout
    assert "OK:" in result.stdout
    entries = [json.loads(line) for line in exported.read_text().splitlines()]
    assert any(e["stream_id"] == stream_id(table) for e in entries)
    result = runner.invoke(app, ["audit", "commitments", "--db", url, "--archive", str(exported)])
    assert result.exit_code == 0, result.stdout
    result = runner.invoke(app, ["audit", "commitments", "--db", url, "--archive", "nope.json"])
    assert result.exit_code == 2


def test_a_game_appended_after_the_fact_is_back_dated_in_the_feed(tmp_path: Path) -> None:
    """An insider appends a whole game to the log later, with times of the past: the feed
    publishes it when it is written, behind entries committed after those times."""
    url = sqlite_store(tmp_path, "late")
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


# --------------------------------------------------------------------------- the feed on NATS
@pytest.fixture
def feed_subjects(nats_url: str) -> Iterator[FeedSubjects]:
    """A feed stream of this test's own, deleted afterwards."""
    subjects = FeedSubjects(
        f"TEST_FEED_{uuid.uuid4().hex[:10]}", f"test{uuid.uuid4().hex[:8]}.feed"
    )
    yield subjects
    asyncio.run(delete_stream(nats_url, subjects.stream))


async def stream_entries(nats_url: str, subjects: FeedSubjects) -> list[FeedEntry]:
    client = await nats.connect(nats_url)
    try:
        return [entry async for entry in read_entries(client.jetstream(), subjects)]
    finally:
        await client.close()


async def test_the_relay_publishes_each_entry_once_in_order_across_restarts(
    tmp_path: Path, nats_url: str, feed_subjects: FeedSubjects
) -> None:
    url = sqlite_store(tmp_path, "relay")
    with EventStore.from_url(url) as store:
        publisher = CommitmentPublisher(store)
        house_game(store, "one")
        publisher.refresh()
        first = FeedRelay(store, feed_subjects, nats_url)
        assert await first.publish_pending() == 2
        assert await first.publish_pending() == 0
        await first.close()
        restarted = FeedRelay(store, feed_subjects, nats_url)
        assert await restarted.publish_pending() == 0  # the stream is the position
        house_game(store, "two")
        house_game(store, "three")
        publisher.refresh()
        # Two replicas at once: each entry is stored once, whoever stores it.
        other = FeedRelay(store, feed_subjects, nats_url)
        counts = await asyncio.gather(restarted.publish_pending(), other.publish_pending())
        assert sum(counts) == 4
        await restarted.close()
        await other.close()
        assert await stream_entries(nats_url, feed_subjects) == read_feed(store.engine)


OPERATOR = Signer.generate()
"""The operator's signing key in these tests (the table service's, in a stack)."""
WITH_KEY = ("--operator-key", OPERATOR.public_key.hex())


async def test_a_forged_archive_accuses_nobody(
    tmp_path: Path, nats_url: str, feed_subjects: FeedSubjects
) -> None:
    """An archive with one fingerprint changed and its chain recomputed, against an untouched
    log: the operator never signed those heads, so it is named forged, not the log rewritten."""
    url = sqlite_store(tmp_path, "honest")
    with EventStore.from_url(url) as store:
        house_game(store, "honest")
        CommitmentPublisher(settle(store)).refresh()
        relay = FeedRelay(store, feed_subjects, nats_url, signer=OPERATOR)
        await relay.publish_pending()
        await relay.close()
    archive = tmp_path / "feed.jsonl"
    stream = ["--nats", nats_url, "--stream", feed_subjects.stream, "--file", str(archive)]
    kept = await asyncio.to_thread(runner.invoke, app, ["audit", "archive", *stream])
    assert kept.exit_code == 0, kept.stdout
    lines = [json.loads(line) for line in archive.read_text().splitlines()]
    assert all(
        len(line["signature"]) == 128 and line["key_id"] == OPERATOR.key_id for line in lines
    )
    honest = runner.invoke(
        app, ["audit", "verify", "--db", url, "--commitments", str(archive), *WITH_KEY]
    )
    assert honest.exit_code == 0, honest.stdout

    previous = lines[0]["previous_hash"]
    for line in lines:  # the forger's archive: another fingerprint, the chain recomputed
        if line["seq"] == 2:
            line["fingerprint"] = "ab" * 32
        entry = entry_of(line)
        line["previous_hash"] = previous
        line["hash"] = previous = entry_hash(entry.seq, entry.commitment, previous)
    forged = tmp_path / "forged.jsonl"
    forged.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for command in (
        ["audit", "verify", "--db", url, "--commitments", str(forged), *WITH_KEY],
        ["audit", "commitments", "--db", url, "--archive", str(forged), *WITH_KEY],
    ):
        said = runner.invoke(app, command)
        assert said.exit_code == 3, said.stdout
        assert f"FORGED: entry 2 of the archived feed {forged}" in said.stdout
        assert "was not signed by the operator's key" in said.stdout
        assert "rewritten" not in said.stdout and "replaced" not in said.stdout


def rewrite_feed(store: EventStore, seq: int, fingerprint: str) -> None:
    """The careful insider's feed: entry ``seq`` with another fingerprint, every hash from it on
    recomputed, so the feed's chain holds."""
    feed = read_feed(store.engine)
    previous = feed[seq - 2].hash if seq > 1 else GENESIS_HASH
    with store.engine.begin() as connection:
        for entry in feed[seq - 1 :]:
            commitment = entry.commitment
            if entry.seq == seq:
                commitment = replace(commitment, fingerprint=fingerprint)
            digest = entry_hash(entry.seq, commitment, previous)
            connection.execute(
                update(commitment_feed)
                .where(commitment_feed.c.seq == entry.seq)
                .values(fingerprint=commitment.fingerprint, hash=digest, previous_hash=previous)
            )
            previous = digest


async def test_a_replaced_round_with_the_feed_rewritten_is_caught_by_the_archive(
    tmp_path: Path, nats_url: str, feed_subjects: FeedSubjects
) -> None:
    """The insider stores another deal for round 2 and rewrites the store's feed to match,
    every chain recomputed: the store agrees with itself, the archive kept from NATS does not."""
    url = sqlite_store(tmp_path, "real")
    with EventStore.from_url(url) as store:
        table = house_game(store, "real")
        CommitmentPublisher(settle(store)).refresh()
        relay = FeedRelay(store, feed_subjects, nats_url, signer=OPERATOR)
        await relay.publish_pending()
        await relay.close()
    archive = tmp_path / "feed.jsonl"
    stream = ["--nats", nats_url, "--stream", feed_subjects.stream, "--file", str(archive)]
    kept = await asyncio.to_thread(runner.invoke, app, ["audit", "archive", *stream])
    assert kept.exit_code == 0, kept.stdout
    assert "Kept 2 new entries" in kept.stdout
    again = await asyncio.to_thread(runner.invoke, app, ["audit", "archive", *stream])
    assert "Kept 0 new entries" in again.stdout and len(archive.read_text().splitlines()) == 2
    for wrong, said in (
        (["--stream", "NO_SUCH_FEED"], "NATS has no commitment feed stream 'NO_SUCH_FEED'"),
        (["--nats", "nats://127.0.0.1:1"], "--nats: cannot read the feed from"),
    ):
        refused = await asyncio.to_thread(runner.invoke, app, ["audit", "archive", *stream, *wrong])
        assert refused.exit_code == 2 and said in refused.stderr

    other_url = sqlite_store(tmp_path, "other")
    with EventStore.from_url(other_url) as other:
        house_game(other, table, later_seed=9)
        alternative = rows(other.engine, stream_id(table))
    with EventStore.from_url(url) as store:
        rewrite(store.engine, stream_id(table), lambda _: alternative)
        (forged,) = logs(store, table)
        second = [e for e in forged if e.type.endswith("DealCommitted")][1]
        committed = audit.decode(second)
        rewrite_feed(store, 2, committed.fingerprint)  # type: ignore[union-attr]

    honest_looking = runner.invoke(app, ["audit", "verify", "--db", url])
    assert honest_looking.exit_code == 0, honest_looking.stdout
    assert runner.invoke(app, ["audit", "commitments", "--db", url]).exit_code == 0
    verify = ["audit", "verify", "--db", url, "--commitments", str(archive), *WITH_KEY]
    caught = runner.invoke(app, verify)
    assert caught.exit_code == 1, caught.stdout
    assert f"stream table-real, version {second.version} (DealCommitted)" in caught.stdout
    assert "it commits round 2 of game 1" in caught.stdout
    assert f"archived in {archive}" in caught.stdout
    assert "the round's deal was replaced after the fact" in caught.stdout
    # The store's feed no longer holds what anyone archived.
    with EventStore.from_url(url) as store:
        rewritten = read_feed(store.engine)
    problem = commitments.check_feed(rewritten, [], [(str(archive), load_archive(archive))])
    assert problem is not None and problem.version == 2


def test_an_archive_catches_a_round_erased_and_a_round_written_in_later(tmp_path: Path) -> None:
    url = sqlite_store(tmp_path, "erased")
    with EventStore.from_url(url) as store:
        publisher = CommitmentPublisher(store)
        house_game(store, "early")
        publisher.refresh()
        house_game(store, "late", start=GAME_START + timedelta(hours=2))
        publisher.refresh()
        archived = ArchivedFeed(read_feed(store.engine), "kept.jsonl")
        (real,) = logs(store, "early")
        assert archived.check_chain() is None and archived.check_log(real) is None
        committed = [e for e in real if e.type.endswith("DealCommitted")]

        # Round 2 erased: the log cut before its commitment (a shorter chain holds).
        erased = archived.check_log(real[: committed[1].version - 1])
        assert erased is not None and erased.version == committed[1].version - 1
        assert "published round 2 of game 1" in erased.reason
        assert "rounds were erased from the log" in erased.reason

        # A table written in between, after the fact: its rounds are in no archive.
        house_game(store, "between", start=GAME_START + timedelta(hours=1))
        (between,) = logs(store, "between")
        late = archived.check_log(between)
        assert late is not None and late.event_type == "DealCommitted"
        assert "written into the log after the fact" in late.reason
        gone = archived.missing_tables([stream_id("early")])
        assert gone is not None and gone.stream_id == stream_id("late")
        assert "the store has no log of it" in gone.reason


async def test_the_relay_stops_where_the_stores_feed_does_not_continue_the_stream(
    tmp_path: Path, nats_url: str, feed_subjects: FeedSubjects
) -> None:
    """Entries missing from the store (deleted rows): the relay publishes nothing out of place
    and says why, rather than skipping them."""
    with EventStore.from_url(sqlite_store(tmp_path, "gap")) as store:
        house_game(store, "one")
        CommitmentPublisher(settle(store)).refresh()
        with store.engine.begin() as connection:
            connection.execute(delete(commitment_feed).where(commitment_feed.c.seq == 1))
        relay = FeedRelay(store, feed_subjects, nats_url)
        with pytest.raises(FeedStuck, match="goes on with entry 2: entries are missing"):
            await relay.publish_pending()
        await relay.close()
        assert await stream_entries(nats_url, feed_subjects) == []
