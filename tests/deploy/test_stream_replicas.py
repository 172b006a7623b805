"""PRESIDENT_STREAM_REPLICAS: the events stream's copies in a NATS cluster."""

from __future__ import annotations

import secrets

import nats
import pytest

from president.service.config import Settings
from president.service.nats import Subjects, ensure_stream
from tests.services.conftest import nats_url  # noqa: F401  (the fixture)


def test_settings_carry_the_replicas_to_the_subjects(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().subjects.replicas == 1
    monkeypatch.setenv("PRESIDENT_STREAM_REPLICAS", "3")
    assert Settings().subjects.replicas == 3
    monkeypatch.setenv("PRESIDENT_STREAM_REPLICAS", "three")
    with pytest.raises(SystemExit, match="PRESIDENT_STREAM_REPLICAS must be a whole number"):
        Settings()


async def test_ensure_stream_creates_the_stream_with_its_replicas(nats_url: str) -> None:  # noqa: F811
    name = f"DEPLOY_TEST_{secrets.token_hex(4).upper()}"
    subjects = Subjects(prefix=f"deploytest.{name.lower()}", stream=name, replicas=1)
    client = await nats.connect(nats_url)
    try:
        js = client.jetstream()
        await ensure_stream(js, subjects)
        await ensure_stream(js, subjects)  # again: an update to the same configuration
        info = await js.stream_info(name)
        assert info.config.num_replicas == 1
        assert info.config.subjects == [subjects.all_tables]
        with pytest.raises(nats.js.errors.APIError, match="replicas"):
            # A single server cannot keep three copies: NATS says so, nothing is changed.
            await ensure_stream(js, Subjects(subjects.prefix, name, replicas=3))
        assert (await js.stream_info(name)).config.num_replicas == 1
    finally:
        await client.jetstream().delete_stream(name)
        await client.close()
