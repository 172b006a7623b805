"""Follows the events stream with an ordered consumer and keeps every table's clock.

On start it replays the whole stream (DeliverPolicy.ALL), folding every
table of this partition, then keeps following live. The scheduler starts
firing once the replay reached the stream's last message at start, so a
restarted timer does not send timeouts for states that have moved on. A
missing event (a gap in a table's versions, or a table whose beginning is
not in the stream) is read from the table service's ReadEvents
(:mod:`president.servicekit.follower`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

import structlog
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy

from president.events.v1 import events_pb2 as pb
from president.hosting.streams import table_id_of
from president.servicekit.follower import Gap, read_gap
from president.servicekit.metrics import EVENTS_CONSUMED
from president.servicekit.nats import Subjects
from president.servicekit.ports import HistoryPort
from president.services.timer.deadlines import Clocks

log = structlog.get_logger(service="timer")
CLOSED_CHECK_SECONDS = 1.0


class Follower:
    """Feeds envelopes from JetStream into :class:`Clocks`."""

    def __init__(
        self,
        clocks: Clocks,
        history: HistoryPort,
        on_change: Callable[[], None],
        on_ready: Callable[[], None],
    ) -> None:
        self._clocks = clocks
        self._history = history
        self._on_change = on_change
        self._on_ready = on_ready
        self.applied = 0

    async def follow(
        self, js: JetStreamContext, subjects: Subjects, client: Client | None = None
    ) -> None:
        """Replay the stream from its start, then follow it until ``client`` closes for good.

        (nats-py reconnects on its own, and the ordered consumer resumes where it was.)
        """
        info = await js.stream_info(subjects.stream)
        target = info.state.last_seq
        ready = target == 0
        if ready:
            self._on_ready()
        replayed = asyncio.Event()

        async def received(message: Msg) -> None:
            nonlocal ready
            await self.handle(message.data)
            if not ready:
                metadata = message.metadata
                if metadata.sequence.stream >= target or metadata.num_pending == 0:
                    ready = True
                    replayed.set()

        # A callback, not next_msg(): a wait with a timeout per message costs
        # more than folding the event. nats-py awaits callbacks one at a time.
        subscription = await js.subscribe(
            subjects.all_tables,
            stream=subjects.stream,
            ordered_consumer=True,
            deliver_policy=DeliverPolicy.ALL,
            cb=received,
        )
        log.info("replaying", stream=subjects.stream, last_seq=target)
        try:
            if not ready:
                await replayed.wait()
                log.info("replayed", tables=len(self._clocks), events=self.applied)
                self._on_ready()
            while client is None or not client.is_closed:
                await asyncio.sleep(CLOSED_CHECK_SECONDS)
            raise ConnectionError("the NATS connection closed")
        finally:
            await subscription.unsubscribe()

    async def handle(self, data: bytes) -> None:
        """One message of the stream."""
        try:
            envelope = pb.EventEnvelope.FromString(data)
        except Exception as error:
            log.error("unreadable message skipped", error=repr(error))
            return
        await self.apply(envelope)

    async def apply(self, envelope: pb.EventEnvelope) -> None:
        """Fold one envelope, reading missing history first when there is a gap."""
        table_id = table_id_of(envelope.stream_id)
        try:
            gap = self._clocks.apply(envelope, datetime.now(UTC))
            if gap is not None:
                await self._fill(gap)
                gap = self._clocks.apply(envelope, datetime.now(UTC))
                if gap is not None:
                    raise LookupError(
                        f"version {envelope.version} still follows a gap after "
                        f"version {gap.after_version}"
                    )
        except Exception as error:
            # Unreadable history: forget the table; its next event reads it again.
            log.error("table dropped", table_id=table_id, error=repr(error))
            self._clocks.forget(table_id)
        else:
            self.applied += 1
            EVENTS_CONSUMED.labels("timer").inc()
        self._on_change()

    async def _fill(self, gap: Gap) -> None:
        events = await read_gap(self._history, gap)
        log.info(
            "gap filled",
            table_id=gap.table_id,
            after_version=gap.after_version,
            read=len(events),
        )
        for missing in events:
            if self._clocks.apply(missing, datetime.now(UTC)) is not None:
                raise LookupError(f"the table service returned events out of order for {gap}")
