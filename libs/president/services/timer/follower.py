"""Follows the events stream with an ordered consumer and keeps every table's clock.

On start it replays the whole stream (DeliverPolicy.ALL), folding every
table of this partition, then keeps following live. The scheduler starts
firing once the replay reached the stream's last message at start, so a
restarted timer does not send timeouts for states that have moved on. A
missing event (a gap in a table's versions, or a table whose beginning is
not in the stream) is read from the table service's ReadEvents
(:mod:`president.servicekit.follower`).

Once the replay is done the follower is *live*: an event whose stamp (the
table replica's clock) is more than two seconds from the timer's clock
starts its deadline when the timer got it, on the timer's clock, so a
replica's clock that runs behind the timer's (or ahead) moves no deadline
(measured with clocks 60 s apart in ``make cluster-chaos``: every turn was
timed out at once). Within that, and in the replay, the stamps count (a
restarted timer rebuilds the same deadlines; it must not give every running
turn its whole time again). When the NATS connection comes back
(a restarted server), it subscribes again at once from the next stream
sequence.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import structlog
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, DeliverPolicy

from president.events.v1 import events_pb2 as pb
from president.hosting.streams import table_id_of
from president.servicekit.follower import Gap, read_gap
from president.servicekit.metrics import EVENTS_CONSUMED, ConsumerLag
from president.servicekit.nats import Subjects
from president.servicekit.ports import HistoryPort
from president.services.timer.deadlines import Clocks

log = structlog.get_logger(service="timer")
#: How often the follower looks whether its connection closed or came back.
CONNECTION_CHECK_SECONDS = 0.2


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
        self._lag = ConsumerLag("timer")
        #: The last stream sequence folded (0: none yet).
        self._last_sequence = 0
        #: The replay is done: deadlines start when an event comes (see the module).
        self.live = False

    async def follow(
        self, js: JetStreamContext, subjects: Subjects, client: Client | None = None
    ) -> None:
        """Replay the stream from its start, then follow it until ``client`` closes for good.

        nats-py reconnects on its own, but its ordered consumer notices a
        restarted server only through missed heartbeats (15 s and more): so when
        the connection comes back, the follower subscribes again right away, from
        the stream sequence after the last one it folded (nothing missed, nothing
        folded twice).
        """
        info = await js.stream_info(subjects.stream)
        target = info.state.last_seq
        if target < self._last_sequence:  # a new stream (the server lost its data): replay
            self._last_sequence = 0
        ready = target == 0 or self._last_sequence >= target
        if ready:
            self.live = True
            self._on_ready()
        replayed = asyncio.Event()

        async def received(message: Msg) -> None:
            nonlocal ready
            await self.handle(message.data)
            metadata = message.metadata
            self._last_sequence = max(self._last_sequence, metadata.sequence.stream)
            if not ready and (metadata.sequence.stream >= target or metadata.num_pending == 0):
                ready = self.live = True
                replayed.set()

        reconnects = _reconnects(client)
        subscription = await self._subscribe(js, subjects, received)
        log.info("replaying", stream=subjects.stream, last_seq=target)
        try:
            if not ready:
                await replayed.wait()
                log.info("replayed", tables=len(self._clocks), events=self.applied)
                self._on_ready()
            while client is None or not client.is_closed:
                await asyncio.sleep(CONNECTION_CHECK_SECONDS)
                if _reconnects(client) != reconnects and client is not None and client.is_connected:
                    reconnects = _reconnects(client)
                    log.info("NATS is back: subscribing again", after=self._last_sequence)
                    with contextlib.suppress(Exception):
                        await subscription.unsubscribe()
                    subscription = await self._subscribe(js, subjects, received)
            raise ConnectionError("the NATS connection closed")
        finally:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()

    async def _subscribe(
        self, js: JetStreamContext, subjects: Subjects, received: Callable[[Msg], Any]
    ) -> Any:
        """An ordered consumer from the start, or after the last stream sequence folded."""
        # A callback, not next_msg(): a wait with a timeout per message costs
        # more than folding the event. nats-py awaits callbacks one at a time.
        if self._last_sequence:
            return await js.subscribe(
                subjects.all_tables,
                stream=subjects.stream,
                ordered_consumer=True,
                config=ConsumerConfig(
                    deliver_policy=DeliverPolicy.BY_START_SEQUENCE,
                    opt_start_seq=self._last_sequence + 1,
                ),
                cb=received,
            )
        return await js.subscribe(
            subjects.all_tables,
            stream=subjects.stream,
            ordered_consumer=True,
            deliver_policy=DeliverPolicy.ALL,
            cb=received,
        )

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
            gap = self._clocks.apply(envelope, datetime.now(UTC), streamed=True, live=self.live)
            if gap is not None:
                await self._fill(gap)
                gap = self._clocks.apply(envelope, datetime.now(UTC), streamed=True, live=self.live)
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
            self._lag.applied(envelope.time)
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
            if self._clocks.apply(missing, datetime.now(UTC), live=self.live) is not None:
                raise LookupError(f"the table service returned events out of order for {gap}")


def _reconnects(client: Client | None) -> int:
    """How often ``client`` has reconnected (nats-py counts it)."""
    return int(client.stats["reconnects"]) if client is not None else 0
