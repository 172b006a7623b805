"""The gauges the alert rules of ``deploy/prometheus/alerts.yml`` stand on, read the way
Prometheus reads them (the default registry's samples): a consumer's delay behind the store,
the outbox relay's backlog in time, and how long a table has stood past its deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from president.hosting.deadlines import TURN, Deadline
from president.servicekit.launcher import free_port
from president.servicekit.metrics import ConsumerLag
from president.servicekit.nats import Subjects
from president.services.table import relay as relay_module
from president.services.table.relay import OutboxRelay
from president.services.timer.deadlines import DeadlineBoard
from president.store import EventStore, NewEvent, StoredEvent

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def sample(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


def test_a_consumer_s_lag_is_the_age_of_the_newest_event_it_applied() -> None:
    lag = ConsumerLag("lag-test")
    assert sample("president_consumer_lag_seconds", consumer="lag-test") == 0.0
    written = datetime.now(UTC) - timedelta(seconds=42)
    lag.applied(written.isoformat())
    seconds = sample("president_consumer_lag_seconds", consumer="lag-test")
    assert seconds is not None and 41.5 < seconds < 43.0
    time.sleep(0.2)  # it does not grow while nothing comes: the age when applied
    assert sample("president_consumer_lag_seconds", consumer="lag-test") == pytest.approx(
        seconds, abs=0.01
    )
    lag.applied("not a time")
    assert sample("president_consumer_lag_seconds", consumer="lag-test") == 0.0


def _due(table_id: str, seconds: float) -> Deadline:
    return Deadline(table_id, TURN, 0, 1, 1, 1, NOW + timedelta(seconds=seconds))


def test_the_timer_s_overdue_is_the_oldest_deadline_past_now() -> None:
    board = DeadlineBoard()
    assert board.overdue(NOW) == 0.0
    board.put("table-a", _due("table-a", 5))
    assert board.overdue(NOW) == 0.0  # not due yet
    board.put("table-b", _due("table-b", -40))
    board.put("table-c", _due("table-c", -3))
    assert board.overdue(NOW) == 40.0
    board.put("table-b", _due("table-b", 30))  # table-b moved: a new deadline
    assert board.overdue(NOW) == 3.0
    board.put("table-c", None)
    assert board.overdue(NOW) == 0.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as opened:
        yield opened


async def test_the_relay_s_backlog_grows_while_nats_is_away(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.append("table-r", 0, [NewEvent("t", b"x")], "c1")
    relay = OutboxRelay(store, Subjects(), f"nats://127.0.0.1:{free_port()}")  # nobody there
    running = asyncio.create_task(relay.run())
    try:
        await asyncio.sleep(1.2)
        behind = sample("president_relay_behind_seconds")
        assert behind is not None and behind >= 1.0
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)

    async def publish(_js: object, _subjects: object, _stored: StoredEvent, *_: object) -> None:
        return None

    monkeypatch.setattr(relay_module.jetstream, "publish", publish)
    relay._js = object()  # type: ignore[assignment]  # NATS is back
    assert await relay.drain() == 1
    behind = sample("president_relay_behind_seconds")
    assert behind is not None and behind < 0.5
