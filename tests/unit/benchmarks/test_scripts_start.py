"""Every benchmark script of ``make bench`` still starts: its imports and arguments are current.

The benchmarks print numbers and assert nothing, and ``make test`` does not run
them, so without this a moved module would only show when someone measures.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.parametrize("script", sorted(BENCHMARKS.glob("*_bench.py")), ids=lambda p: p.stem)
def test_the_benchmark_starts(script: Path) -> None:
    started = subprocess.run(
        [sys.executable, str(script), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert started.returncode == 0, started.stderr
    assert "usage:" in started.stdout
