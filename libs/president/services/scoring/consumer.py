"""The durable JetStream pull consumer that feeds the read models.

Messages are acknowledged only after their transaction committed, so a
crash redelivers them, and the store's progress check makes the redelivery
a no-op: every event counts exactly once. An event whose predecessors are
missing (a gap) is preceded by the missing ones, read from the table
service's ReadEvents (:mod:`president.servicekit.follower`). An event that
fails for a passing reason (database or table service away) is negatively
acknowledged and comes back later.

A rewound history (an asynchronous standby's failover: the store lost a
table's last events and gave their versions to new ones; JetStream brings
both): an event the store marks :data:`~president.services.scoring.store.SUSPECT`
(another event at the version applied last, or one that does not follow it),
or an event delivered for the first time at or below the version the stream
brought last for its table with another hash (the timer's rule: the stream
brings a table's events in order, and keeps both histories), makes the
consumer read from the table service the event it applied last.
If the store still holds it, the suspect event belongs to a lost history and
is dropped; if not, the table is taken out of the read models
(:meth:`ScoringStore.forget_table`) and its events are applied again from the
store, as the gateway's feed and the timer read a rewound table again.
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
from president.services.scoring.store import (
    APPLIED,
    SKIPPED,
    SUSPECT,
    BrokenStream,
    ScoringStore,
)

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
#: The tables whose last streamed event the consumer remembers (then it starts again).
STREAMED_TABLES = 100_000


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
        #: Tables whose history was found rewound and read again from the store.
        self.rewound = 0
        self._lag = ConsumerLag("scoring")
        # Table id -> the version and hash of its event the stream delivered first last.
        self._streamed: dict[str, tuple[int, str]] = {}

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
            first = [message.metadata.num_delivered == 1 for message in messages]
            outcomes = await self.apply_all(envelopes, first)
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

    async def apply_all(
        self,
        envelopes: Sequence[pb.EventEnvelope | None],
        first: Sequence[bool] | None = None,
    ) -> list[bool]:
        """Apply a batch in order; for each, whether it may be acknowledged. ``first``: whether
        each was delivered for the first time (None: none was), in the stream's order."""
        done = await asyncio.to_thread(self._apply_batch, envelopes)
        fresh = first if first is not None else [False] * len(envelopes)
        outcomes: list[bool] = []
        for envelope, result, new in zip(envelopes, done, fresh, strict=True):
            again = envelope is not None and new and self._streamed_again(envelope)
            if envelope is not None and again and result == SKIPPED:
                outcomes.append(await self._check_rewind(envelope, suspect=True))
            elif envelope is not None and (result == SUSPECT or isinstance(result, Gap)):
                outcomes.append(await self._settle(envelope, result))
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

    def _streamed_again(self, envelope: pb.EventEnvelope) -> bool:
        """Whether the stream, delivering ``envelope`` for the first time, brings a version
        it brought before with another hash (a history rewound under it)."""
        table_id = table_id_of(envelope.stream_id)
        if not self._partition.owns(table_id):
            return False
        if len(self._streamed) >= STREAMED_TABLES and table_id not in self._streamed:
            self._streamed.clear()  # only what notices a rewind early is forgotten
        last = self._streamed.get(table_id)
        mark = (envelope.version, envelope.hash)
        self._streamed[table_id] = mark
        return last is not None and envelope.version <= last[0] and last != mark

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

    async def _settle(self, envelope: pb.EventEnvelope, result: str | Gap | None) -> bool:
        """Whether ``envelope`` may be acknowledged, once a gap or a suspect is seen to."""
        if result == SUSPECT:
            return await self._after_suspect(envelope)
        if isinstance(result, Gap):
            return await self._after_gap(envelope, result)
        return result is not None

    async def _after_suspect(self, envelope: pb.EventEnvelope) -> bool:
        """An event that is not the one applied last at its version, or does not follow it:
        dropped if the store holds what was applied (a lost history's event); otherwise the
        table's history was rewound, and it is applied again from the store."""
        again = await asyncio.to_thread(self._apply_one, envelope)  # outside its batch
        if again != SUSPECT:
            return await self._settle(envelope, again)
        return await self._check_rewind(envelope, suspect=True)

    async def _check_rewind(self, envelope: pb.EventEnvelope, *, suspect: bool) -> bool:
        """Read the event applied last from the store: held, the ``suspect`` envelope is a
        lost history's (dropped; one that is not suspect comes back later); gone or
        another, the table is applied again from the store."""
        table_id = table_id_of(envelope.stream_id)
        mark = await asyncio.to_thread(self._store.last_applied, envelope.stream_id)
        if mark[0] == 0:
            return False  # nothing applied (forgotten, not read again yet): it comes back
        try:
            stored = await self._history.read_events(table_id, mark[0] - 1, 1)
        except Exception as error:
            log.warning("rewind not checked, will retry", table_id=table_id, error=repr(error))
            return False
        if stored and (stored[0].version, stored[0].hash) == mark:
            return suspect  # the store holds what was applied
        log.warning(
            "history rewound: the table is read again from the store",
            table_id=table_id,
            applied_version=mark[0],
            stored_version=stored[0].version if stored else None,
        )
        await asyncio.to_thread(self._store.forget_table, table_id)
        self.rewound += 1
        try:
            history = await read_gap(self._history, Gap(table_id, 0))
        except Exception as error:
            log.warning("rewound table not read, will retry", table_id=table_id, error=repr(error))
            return False
        results = await asyncio.to_thread(self._apply_batch, history)
        if not all(result in (APPLIED, SKIPPED) for result in results):
            return False
        final = await asyncio.to_thread(self._apply_one, envelope)
        return final is not None and not isinstance(final, Gap)  # SUSPECT: a lost one

    async def _after_gap(self, envelope: pb.EventEnvelope, gap: Gap) -> bool:
        """Read the missing events from the table service, apply them, then this one."""
        table_id = table_id_of(envelope.stream_id)
        again = await asyncio.to_thread(self._apply_one, envelope)
        if not isinstance(again, Gap):
            return again is not None and await self._settle(envelope, again)
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
        if not any(item.version == envelope.version - 1 for item in missing):
            # Published after its commit, so its predecessors were stored: the store lost
            # them (a rewound history). Dropped: a later event of the table, if any, fills
            # from the store whatever it holds.
            log.warning(
                "event of a lost history dropped",
                table_id=table_id,
                version=envelope.version,
                stored_to=missing[-1].version if missing else gap.after_version,
            )
            return True
        log.info(
            "gap filled", table_id=table_id, after_version=gap.after_version, read=len(missing)
        )
        results = await asyncio.to_thread(self._apply_batch, [*missing, envelope])
        if SUSPECT in results:  # the events read do not follow those applied: rewound?
            return await self._check_rewind(envelope, suspect=False)
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
