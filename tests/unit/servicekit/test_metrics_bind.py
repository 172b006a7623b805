"""/metrics listens on loopback unless a deployment opens it (``president run`` gives every
service a port of its own: it must not be reachable from other machines)."""

from __future__ import annotations

import pytest

from president.servicekit.config import Settings
from president.servicekit.launcher import free_port
from president.servicekit.metrics import serve_metrics


def test_metrics_bind_loopback_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRESIDENT_METRICS_HOST", raising=False)
    settings = Settings.from_env()
    port = free_port()  # as president run hands out: a fixed port, not 0
    assert serve_metrics(port, settings.metrics_host) == ("127.0.0.1", port)


def test_a_deployment_may_open_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRESIDENT_METRICS_HOST", "0.0.0.0")
    host, _ = serve_metrics(free_port(), Settings.from_env().metrics_host)
    assert host == "0.0.0.0"
