"""Receipts through the gateway: every change a client receives carries its event's chain hash.

Two people, two bots and a spectator at one table; the clients keep the
receipts of what they were sent (``client.receipts``), on Watch and on a
Session stream. Each receipt is the stored event's hash at its version, the
receipts link into one chain, and exported, they prove the stored log with
``president.audit``; they hold nothing but versions, hashes and types. No
stored event's blinding value reaches any of them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import nats
import pytest

from president import audit
from president.audit import commitments
from president.audit.commitments import unsigned_entry
from president.audit.receipts import unsigned
from president.client import GatewayClient, GatewayError, play_seat
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.blinding import BLIND
from president.hosting.signatures import OperatorKeys, key_id
from president.servicekit.feed_stream import FeedStreamError, FeedSubjects, read_entries
from president.servicekit.launcher import Stack
from president.servicekit.nats import Subjects
from president.store.commitments import FeedEntry, entry_of, read_feed, verify_feed
from tests.support.gateway_truth import Store, table_of_humans

GAME_SECONDS = 90


@pytest.fixture
async def client(stack: Stack) -> AsyncIterator[GatewayClient]:
    made = GatewayClient.connect(stack.gateway)
    yield made
    await made.close()


async def test_every_change_carries_a_receipt_that_proves_the_log(
    client: GatewayClient, store: Store, tmp_path: Path
) -> None:
    humans = await table_of_humans(
        client, "classic", humans=2, seats=4, options={"game_end": "rounds:1"}
    )
    spectator = client.sibling()
    await spectator.spectate(client.table_id)
    await client.start()

    async def watch_to_the_end(watcher: GatewayClient) -> list[pb.WatchResponse]:
        out: list[pb.WatchResponse] = []
        async for change in watcher.watch():
            out.append(change)
            if change.view.phase == "game_over":
                return out
        return out

    plays = [
        play_seat(human, host_rounds=1 if human is client else None, session=human is humans[1])
        for human in humans
    ]
    *_, watched = await asyncio.wait_for(
        asyncio.gather(*plays, watch_to_the_end(spectator)), GAME_SECONDS
    )
    assert watched[0].snapshot and watched[0].receipt_hash  # the snapshot carries one too
    events = {event.version: event for event in store.events(client.table_id)}
    files = []
    for holder in [*humans, spectator]:
        kept = holder.receipts
        assert len(kept) > 10 and not kept.conflicts
        for receipt in kept:
            stored = events[receipt.version]
            assert (receipt.hash, receipt.previous_hash) == (stored.hash, stored.previous_hash)
            assert receipt.type in ("", stored.type)
        path = kept.export(tmp_path / f"{len(files)}.json")
        data = json.loads(path.read_text())
        assert data["table_id"] == client.table_id
        assert all(
            set(item) == {"version", "hash", "previous_hash", "type", "signature", "key_id"}
            for item in data["receipts"]
        )
        files.append(audit.load_receipts(path))

    # Every receipt is signed by the key the gateway publishes to anyone, and a receipt with
    # its hash changed is not.
    (published,) = await client.operator_keys()
    assert published.current and published.algorithm == "ed25519"
    assert published.key_id == key_id(published.public_key)
    operator = OperatorKeys([published.public_key])
    assert unsigned(files, client.table_id, operator) is None
    first = files[0].receipts[0]
    changed = replace(files[0], receipts=(replace(first, hash="ab" * 32),))
    forged = unsigned([changed], client.table_id, operator)
    assert forged is not None and "does not match" in forged.reason

    log = [events[version] for version in sorted(events)]
    report = audit.verify_table(log, receipts=files)
    assert report.ok, report.problem
    proof = audit.proven(log, files)
    assert proof.matching == proof.receipts
    assert proof.proven_through >= max(r.version for r in humans[0].receipts)

    # Every stored event's blinding value stays in the log: no seat or spectator receives
    # one, on Watch, on a Session, in the activity, the table or the receipts it exports.
    sent = [change.SerializeToString() for change in watched]
    sent += [path.read_bytes() for path in tmp_path.glob("*.json")]
    for holder in [*humans, spectator]:
        sent += await everything_sent_to(holder, store.version(client.table_id))
    blinds = [event.metadata[BLIND] for event in store.events(client.table_id)]
    assert len(blinds) == len(set(blinds)) > len(log) // 2
    for value in map(str, blinds):
        assert not any(value.encode() in wire or bytes.fromhex(value) in wire for wire in sent)


async def everything_sent_to(holder: GatewayClient, through: int) -> list[bytes]:
    """What the gateway sends ``holder`` of the whole table, serialized: the table, every
    change since the first replayed on Watch and on a Session, and every activity page."""

    async def until_through(changes: AsyncIterator[pb.WatchResponse]) -> list[bytes]:
        out = []
        async for change in changes:
            out.append(change.SerializeToString())
            if change.version >= through:
                break
        return out

    sent = [(await holder.get_table()).SerializeToString()]
    sent += await asyncio.wait_for(until_through(holder.watch(from_version=1)), GAME_SECONDS)
    async with holder.session(from_version=1) as session:
        sent += await asyncio.wait_for(until_through(session.changes()), GAME_SECONDS)
    token = ""
    while True:
        page = await holder.activity(page_size=100, page_token=token)
        sent.append(page.SerializeToString())
        if not page.next_page_token:
            return sent
        token = page.next_page_token


async def test_the_table_service_publishes_each_commitment(
    client: GatewayClient, store: Store, stack: Stack
) -> None:
    """The round's fingerprint is in the commitment feed moments after it was committed."""
    await client.create_table("house", display_name="Ada", visibility="practice")
    await client.start()
    stream = f"table-{client.table_id}"
    for _ in range(100):
        feed = read_feed(store.store.engine)
        if any(entry.commitment.stream_id == stream for entry in feed):
            break
        await asyncio.sleep(0.1)
    log = store.events(client.table_id)
    (committed,) = [e for e in log if e.type.endswith("DealCommitted")]
    (entry,) = [e for e in feed if e.commitment.stream_id == stream]
    assert entry.commitment.version == committed.version
    assert commitments.check_feed(feed, [log]) is None

    # Anyone reads it through the gateway, without a token, and can archive it.
    reader = GatewayClient.connect(stack.gateway)
    try:
        published = await reader.list_commitments(day=entry.commitment.day)
        with pytest.raises(GatewayError) as refused:
            await reader.list_commitments(day="yesterday")
    finally:
        await reader.close()
    assert refused.value.reason == "INVALID_DAY"
    archived = [
        entry_of({f.name: getattr(item, f.name) for f in item.DESCRIPTOR.fields})
        for item in published
    ]
    assert entry in archived
    assert verify_feed(archived) is None

    # And on its public JetStream stream, where the store cannot rewrite it.
    events = Subjects(stack.env["PRESIDENT_SUBJECT_PREFIX"], stack.env["PRESIDENT_STREAM"])
    on_nats: list[FeedEntry] = []
    for _ in range(100):
        on_nats = await nats_entries(stack.nats_url, FeedSubjects.beside(events))
        if entry in on_nats:
            break
        await asyncio.sleep(0.1)
    assert entry in on_nats
    assert [e.seq for e in on_nats] == list(range(1, len(on_nats) + 1))
    # Each head on the stream is signed by the operator's published key.
    (published,) = await reader_keys(stack)
    assert unsigned_entry(on_nats, OperatorKeys([published.public_key])) is None


async def reader_keys(stack: Stack) -> list[pb.OperatorKey]:
    """The operator's keys, as anyone reads them from the gateway (no token)."""
    reader = GatewayClient.connect(stack.gateway)
    try:
        return await reader.operator_keys()
    finally:
        await reader.close()


async def nats_entries(url: str, subjects: FeedSubjects) -> list[FeedEntry]:
    client = await nats.connect(url)
    try:
        return [entry async for entry in read_entries(client.jetstream(), subjects)]
    except FeedStreamError:
        return []  # not created yet
    finally:
        await client.close()
