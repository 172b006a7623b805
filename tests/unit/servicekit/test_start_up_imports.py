"""A restarted service serves again sooner when it imports only what it uses: the gateway
and the timer open no event store, so they start without SQLAlchemy and Alembic (with
its Mako; a good part of a service's start-up, ``make chaos``'s ``back_s``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("sqlalchemy", "alembic", "mako")


@pytest.mark.parametrize("service", ["gateway", "timer"])
def test_a_service_without_a_store_starts_without_sqlalchemy_or_alembic(service: str) -> None:
    modules = f"president.services.{service}.main, president.services.{service}.bootstrap"
    probe = f"import sys, {modules}\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == ""


def test_migrations_still_run_alembic_when_asked() -> None:
    probe = (
        "import sys\n"
        "from president.store import head_revision\n"
        "assert 'alembic' not in sys.modules\n"
        "print(head_revision(), 'alembic' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    head, loaded = result.stdout.split()
    assert head and loaded == "True"
