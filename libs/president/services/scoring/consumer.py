"""The durable JetStream pull consumer that feeds the read models.

Messages are acknowledged only after their transaction committed, so a
crash redelivers them, and the store's progress check makes the redelivery
a no-op: every event counts exactly once. An event whose predecessors are
missing (a gap) is preceded by the missing ones, read from the table
service's ReadEvents (:mod:`president.servicekit.follower`). An event that
fails for a passing reason (database or table service away) is negatively
acknowledged and comes back later.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import structlog
from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from president.events.v1 import events_pb2 as pb
from president.hosting.streams import table_id_of
from president.servicekit.follower import Gap, read_gap
from president.servicekit.metrics import EVENTS_CONSUMED, ConsumerLag
from president.servicekit.nats import Subjects
from president.servicekit.partition import Partition
from president.servicekit.ports import HistoryPort
from president.services.scoring.store import APPLIED, SKIPPED, BrokenStream, ScoringStore

log = structlog.get_logger(service="scoring")
BATCH = 1000
FETCH_SECONDS = 1.0
#: After the first messages, keep fetching this long to fill the batch: one
#: transaction for many events costs far less than one each (a busy table's
#: progress and standings rows are written once per batch, not per event),
#: and standings may lag half a second.
FILL_SECONDS = 0.5
RETRY_DELAY_SECONDS = 1.0
ACK_WAIT_SECONDS = 30.0


class Consumer:
    """Applies the stream's envelopes to a :class:`ScoringStore`, exactly once each."""

    def __init__(
        self,
        store: ScoringStore,
        history: HistoryPort,
        durable: str,
        partition: Partition | None = None,
    ) -> None:
        self._store = store
        self._history = history
        self._partition = partition or Partition()
        self.durable = f"{durable}{self._partition.suffix}"
        self.applied = 0
        self._lag = ConsumerLag("scoring")

    async def run(self, js: JetStreamContext, subjects: Subjects) -> None:
        """Fetch and apply forever."""
        config = ConsumerConfig(
            durable_name=self.durable,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=ACK_WAIT_SECONDS,
            max_ack_pending=10_000,
            filter_subject=subjects.all_tables,
        )
        subscription = await js.pull_subscribe(
            subjects.all_tables, durable=self.durable, stream=subjects.stream, config=config
        )
        log.info("consuming", stream=subjects.stream, durable=self.durable)
        while True:
            try:
                messages = await subscription.fetch(BATCH, timeout=FETCH_SECONDS)
            except (NatsTimeout, TimeoutError):
                continue
            messages = await _fill(subscription, list(messages))
            envelopes: list[pb.EventEnvelope | None] = []
            for message in messages:
                envelopes.append(self._parse(message.data))
            outcomes = await self.apply_all(envelopes)
            for message, ok in zip(messages, outcomes, strict=True):
                if ok:
                    await message.ack()
                else:
                    await message.nak(delay=RETRY_DELAY_SECONDS)

    @staticmethod
    def _parse(data: bytes) -> pb.EventEnvelope | None:
        try:
            return pb.EventEnvelope.FromString(data)
        except Exception as error:
            log.error("unreadable message skipped", error=repr(error))
            return None

    async def apply_all(self, envelopes: Sequence[pb.EventEnvelope | None]) -> list[bool]:
        """Apply a batch in order; for each, whether it may be acknowledged."""
        done = await asyncio.to_thread(self._apply_batch, envelopes)
        outcomes: list[bool] = []
        for envelope, result in zip(envelopes, done, strict=True):
            if isinstance(result, Gap) and envelope is not None:
                outcomes.append(await self._after_gap(envelope, result))
            else:
                outcomes.append(result is not None)
        for envelope, ok in zip(reversed(envelopes), reversed(outcomes), strict=True):
            if ok and envelope is not None:  # the newest this batch applied (or skipped)
                self._lag.applied(envelope.time)
                break
        return outcomes

    def _apply_batch(self, envelopes: Sequence[pb.EventEnvelope | None]) -> list[str | Gap | None]:
        """Each envelope's result: APPLIED/SKIPPED, a Gap, or None (retry later).

        One transaction for the batch; if it fails, one per envelope, so one
        bad event does not hold back the others.
        """
        mine = [
            envelope is not None and self._partition.owns(table_id_of(envelope.stream_id))
            for envelope in envelopes
        ]
        owned = [
            envelope
            for envelope, keep in zip(envelopes, mine, strict=True)
            if keep and envelope is not None
        ]
        try:
            done = iter(self._store.apply_batch(owned))
        except Exception as error:
            log.warning("batch not applied, applying one by one", error=repr(error))
            return [self._apply_one(envelope) for envelope in envelopes]
        results: list[str | Gap | None] = []
        for keep in mine:
            if not keep:
                results.append(SKIPPED)
                continue
            result = next(done)
            if result == APPLIED:
                self._count()
            results.append(result)
        return results

    def _count(self) -> None:
        self.applied += 1
        EVENTS_CONSUMED.labels("scoring").inc()

    def _apply_one(self, envelope: pb.EventEnvelope | None) -> str | Gap | None:
        if envelope is None:
            return SKIPPED
        table_id = table_id_of(envelope.stream_id)
        if not self._partition.owns(table_id):
            return SKIPPED
        try:
            result = self._store.apply(envelope)
        except BrokenStream as error:
            log.error("event cannot be applied, skipped", error=str(error))
            return SKIPPED
        except Exception as error:
            log.warning(
                "event not applied, will retry",
                stream_id=envelope.stream_id,
                version=envelope.version,
                error=repr(error),
            )
            return None
        if result == APPLIED:
            self._count()
        return result

    async def _after_gap(self, envelope: pb.EventEnvelope, gap: Gap) -> bool:
        """Read the missing events from the table service, apply them, then this one."""
        table_id = table_id_of(envelope.stream_id)
        again = await asyncio.to_thread(self._apply_one, envelope)
        if not isinstance(again, Gap):
            return again is not None  # an earlier envelope of the batch filled it
        gap = again
        try:
            missing = await read_gap(self._history, gap, before=envelope.version)
        except Exception as error:
            log.warning(
                "gap not filled, will retry",
                table_id=table_id,
                after_version=gap.after_version,
                error=repr(error),
            )
            return False
        log.info(
            "gap filled", table_id=table_id, after_version=gap.after_version, read=len(missing)
        )
        results = await asyncio.to_thread(self._apply_batch, [*missing, envelope])
        return all(result is not None and not isinstance(result, Gap) for result in results)


async def _fill(subscription: Any, messages: list[Any]) -> list[Any]:
    """Top up a batch that came back short: wait FILL_SECONDS, then take what arrived.

    One pause and one more fetch, whatever the rate: a fetch per trickling
    message costs more CPU than applying it.
    """
    if len(messages) >= BATCH:
        return messages
    await asyncio.sleep(FILL_SECONDS)
    try:
        messages.extend(await subscription.fetch(BATCH - len(messages), timeout=0.05))
    except (NatsTimeout, TimeoutError):
        pass
    return messages
