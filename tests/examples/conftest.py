"""One stack for every example: the seven services and the web edge, on SQLite and NATS."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from president.servicekit.launcher import ALL_SERVICES, Stack
from tests.support.node_client import node_client
from tests.support.servers import isolated_env, sqlite_stack_in

__all__ = ["examples_stack", "node_client"]


@pytest.fixture(scope="module")
def examples_stack(tmp_path_factory: pytest.TempPathFactory, nats_url: str) -> Iterator[Stack]:
    """The services and the web edge, as ``make run`` starts them."""
    workdir = tmp_path_factory.mktemp("examples")
    with sqlite_stack_in(workdir, nats_url, isolated_env(), ALL_SERVICES) as stack:
        yield stack
