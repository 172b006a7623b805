"""The events stream's copies in a NATS cluster (PRESIDENT_STREAM_REPLICAS) and how long
it keeps events (PRESIDENT_STREAM_MAX_AGE_SECONDS)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import nats
import pytest

from president.servicekit.config import Settings
from president.servicekit.free_ports import free_port
from president.servicekit.nats import Subjects, connect, ensure_stream, servers
from president.services.table.leases import Leases
from tests.support.servers import nats_url  # noqa: F401  (the fixture)


@asynccontextmanager
async def scratch_stream(url: str) -> AsyncIterator[tuple[Any, str]]:
    """JetStream on ``url`` and the name of a stream of its own, deleted afterwards."""
    name = f"DEPLOY_TEST_{secrets.token_hex(4).upper()}"
    client = await nats.connect(url)
    try:
        yield client.jetstream(), name
    finally:
        await client.jetstream().delete_stream(name)
        await client.close()


def test_settings_carry_the_replicas_to_the_subjects(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings.from_env().subjects.replicas == 1
    monkeypatch.setenv("PRESIDENT_STREAM_REPLICAS", "3")
    assert Settings.from_env().subjects.replicas == 3
    monkeypatch.setenv("PRESIDENT_STREAM_REPLICAS", "three")
    with pytest.raises(SystemExit, match="PRESIDENT_STREAM_REPLICAS must be a whole number"):
        Settings.from_env()


async def test_ensure_stream_creates_the_stream_with_its_replicas(nats_url: str) -> None:  # noqa: F811
    async with scratch_stream(nats_url) as (js, name):
        subjects = Subjects(prefix=f"deploytest.{name.lower()}", stream=name, replicas=1)
        await ensure_stream(js, subjects)
        await ensure_stream(js, subjects)  # again: an update to the same configuration
        info = await js.stream_info(name)
        assert info.config.num_replicas == 1
        assert info.config.subjects == [subjects.all_tables]
        with pytest.raises(nats.js.errors.APIError, match="replicas"):
            # A single server cannot keep three copies: NATS says so, nothing is changed.
            await ensure_stream(js, Subjects(subjects.prefix, name, replicas=3))
        assert (await js.stream_info(name)).config.num_replicas == 1


def test_settings_carry_how_long_the_stream_keeps_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings.from_env().subjects.max_age_seconds == 7 * 24 * 3600
    monkeypatch.setenv("PRESIDENT_STREAM_MAX_AGE_SECONDS", "0")
    assert Settings.from_env().subjects.max_age_seconds == 0  # for ever
    monkeypatch.setenv("PRESIDENT_STREAM_MAX_AGE_SECONDS", "60")
    with pytest.raises(SystemExit, match=r"at least 600 s .* not 60 s"):
        Settings.from_env()


async def test_ensure_stream_limits_how_long_events_stay(nats_url: str) -> None:  # noqa: F811
    async with scratch_stream(nats_url) as (js, name):
        forever = Subjects(prefix=f"deploytest.{name.lower()}", stream=name, max_age_seconds=0)
        await ensure_stream(js, forever)  # as an earlier version made it: no limit
        assert not (await js.stream_info(name)).config.max_age
        await ensure_stream(js, Subjects(forever.prefix, name, max_age_seconds=86_400))
        assert (await js.stream_info(name)).config.max_age == 86_400


def test_a_cluster_url_lists_its_servers() -> None:
    assert servers("nats://a:4222") == ["nats://a:4222"]
    assert servers("nats://a:4222, nats://b:4222,nats://c:4222") == [
        "nats://a:4222",
        "nats://b:4222",
        "nats://c:4222",
    ]


async def test_a_service_connects_while_the_first_server_listed_is_away(
    nats_url: str,  # noqa: F811
) -> None:
    # PRESIDENT_NATS_URL names a cluster's servers; the first is down: the next one serves.
    client, js = await connect(f"nats://127.0.0.1:{free_port()},{nats_url}", "deploy-test")
    try:
        assert (await js.account_info()).streams >= 0
    finally:
        await client.close()


async def test_leases_take_a_bucket_made_with_another_lifetime(nats_url: str) -> None:  # noqa: F811
    # A deployment that changes PRESIDENT_TABLE_LEASE_SECONDS (or PRESIDENT_STREAM_REPLICAS)
    # finds the bucket made with the old value: the replica brings it to the new one.
    bucket = f"DEPLOY_TEST_{secrets.token_hex(4).upper()}_TABLE_LEASES"
    client = await nats.connect(nats_url)
    js = client.jetstream()
    await js.create_key_value(bucket=bucket, ttl=5)
    leases = Leases(nats_url, bucket, "127.0.0.1:1", 3.0, replicas=1)
    running = asyncio.create_task(leases.run())
    try:
        async with asyncio.timeout(10):
            while await leases.owner("t1") != "127.0.0.1:1" or leases._kv is None:
                await asyncio.sleep(0.1)
        assert (await js.stream_info(f"KV_{bucket}")).config.max_age == 3
    finally:
        running.cancel()
        await leases.close()
        await js.delete_key_value(bucket)
        await client.close()
