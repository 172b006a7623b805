"""Follows the events stream with an ordered consumer and keeps every table's clock.

On start it replays the whole stream (DeliverPolicy.ALL), folding every
table of this partition, then keeps following live. The scheduler starts
firing once the replay reached the stream's last message at start, so a
restarted timer does not send timeouts for states that have moved on. A
missing event (a gap in a table's versions, or a table whose beginning is
not in the stream) is read from the table service's ReadEvents.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import structlog
from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy

from president.events.v1 import events_pb2 as pb
from president.service.metrics import EVENTS_CONSUMED
from president.service.nats import Subjects
from president.service.ports import HistoryPort
from president.tables import table_id_of
from services.timer.deadlines import Clocks, Gap

log = structlog.get_logger(service="timer")
POLL_SECONDS = 1.0


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

    async def follow(self, js: JetStreamContext, subjects: Subjects) -> None:
        """Replay the stream from its start, then follow it forever."""
        info = await js.stream_info(subjects.stream)
        target = info.state.last_seq
        ready = target == 0
        if ready:
            self._on_ready()
        subscription = await js.subscribe(
            subjects.all_tables,
            stream=subjects.stream,
            ordered_consumer=True,
            deliver_policy=DeliverPolicy.ALL,
        )
        log.info("replaying", stream=subjects.stream, last_seq=target)
        try:
            while True:
                try:
                    message = await subscription.next_msg(timeout=POLL_SECONDS)
                except (NatsTimeout, TimeoutError):
                    continue
                await self.handle(message.data)
                if not ready:
                    metadata = message.metadata
                    if metadata.sequence.stream >= target or metadata.num_pending == 0:
                        ready = True
                        log.info("replayed", tables=len(self._clocks), events=self.applied)
                        self._on_ready()
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
        events = await self._history.read_events(gap.table_id, gap.after_version)
        log.info(
            "gap filled",
            table_id=gap.table_id,
            after_version=gap.after_version,
            read=len(events),
        )
        for missing in events:
            if self._clocks.apply(missing, datetime.now(UTC)) is not None:
                raise LookupError(f"the table service returned events out of order for {gap}")
