"""Publishing stored events to JetStream, on a real NATS server: in order, once each."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import nats

from president.events.v1 import events_pb2 as epb
from president.servicekit.nats import Subjects, ensure_stream, publish, publish_all
from president.store import Position, StoredEvent


def stored(table_id: str, version: int) -> StoredEvent:
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
        hash="0" * 64,
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
