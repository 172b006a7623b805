"""Publishing stored events to JetStream, on a real NATS server: in order, once each."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import nats

from president.events.v1 import events_pb2 as epb
from president.servicekit.nats import Subjects, ensure_stream, publish, publish_all
from president.store import Position, StoredEvent


def stored(table_id: str, version: int, event_hash: str = "0" * 64) -> StoredEvent:
    return StoredEvent(
        stream_id=f"table-{table_id}",
        version=version,
        type="president.events.v1.ReactionShown",
        payload=epb.ReactionShown(seat=0, reaction=f"r{version}").SerializeToString(),
        metadata={
            "actor": "test",
            "command_id": f"c{version}",
            "time": datetime.now(UTC).isoformat(),
        },
        position=Position(0, version),
        hash=event_hash,
        previous_hash="0" * 64,
    )


async def test_publish_all_stores_in_order_and_a_repeat_once(nats_url: str) -> None:
    run = uuid.uuid4().hex[:8]
    subjects = Subjects(prefix=f"pub{run}.events.table", stream=f"PUBLISH_TEST_{run}")
    client = await nats.connect(nats_url)
    js = client.jetstream()
    try:
        await ensure_stream(js, subjects)
        first = [stored("a", 1), stored("b", 1), stored("a", 2), stored("a", 3)]
        assert await publish_all(js, subjects, first, 5.0) == [True] * 4
        # Published again (a relay after a crash): acknowledged, not stored twice.
        assert await publish_all(js, subjects, [first[2], stored("a", 4)], 5.0) == [True, True]
        await publish(js, subjects, first[0], 5.0)
        info = await js.stream_info(subjects.stream)
        assert info.state.messages == 5
        seen = []
        subscription = await js.subscribe(subjects.all_tables, ordered_consumer=True)
        for _ in range(5):
            message = await subscription.next_msg(timeout=5)
            envelope = epb.EventEnvelope.FromString(message.data)
            seen.append((envelope.stream_id, envelope.version))
        await subscription.unsubscribe()
        assert seen == [
            ("table-a", 1),
            ("table-b", 1),
            ("table-a", 2),
            ("table-a", 3),
            ("table-a", 4),
        ]
        assert await publish_all(js, subjects, [], 5.0) == []
    finally:
        await js.delete_stream(subjects.stream)
        await client.close()


async def test_a_new_event_under_a_lost_events_version_is_stored(nats_url: str) -> None:
    """A database that failed over to a standby without its last commits gives their
    versions to new events: JetStream takes those (another hash, another Msg-Id) instead of
    dropping them as duplicates of the lost ones, so followers see the history rewound."""
    run = uuid.uuid4().hex[:8]
    subjects = Subjects(prefix=f"rew{run}.events.table", stream=f"REWOUND_TEST_{run}")
    client = await nats.connect(nats_url)
    js = client.jetstream()
    try:
        await ensure_stream(js, subjects)
        lost = [stored("a", version, "1" * 64) for version in (1, 2, 3)]
        assert await publish_all(js, subjects, lost, 5.0) == [True] * 3
        standby = [lost[0], stored("a", 2, "2" * 64), stored("a", 3, "2" * 64)]
        for event in standby:  # the standby's relay, from its own (older) position
            await publish(js, subjects, event, 5.0)
        subscription = await js.subscribe(subjects.all_tables, ordered_consumer=True)
        seen = []
        for _ in range(5):
            envelope = epb.EventEnvelope.FromString((await subscription.next_msg(timeout=5)).data)
            seen.append((envelope.version, envelope.hash[0]))
        await subscription.unsubscribe()
        assert seen == [(1, "1"), (2, "1"), (3, "1"), (2, "2"), (3, "2")]
        assert (await js.stream_info(subjects.stream)).state.messages == 5
    finally:
        await js.delete_stream(subjects.stream)
        await client.close()
