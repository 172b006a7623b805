"""The tournament core is pure: no I/O, no clock, no randomness; times and secrets are inputs."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import president.tournament

CORE = Path(president.tournament.__file__).parent
#: What the core may import besides itself and the rules (``datetime`` for its type only).
ALLOWED = {"__future__", "collections", "dataclasses", "enum", "typing", "itertools", "datetime"}
#: What would read the clock.
CLOCK = {"now", "today", "utcnow", "time", "monotonic"}


def test_the_core_imports_only_the_rules_and_pure_standard_modules() -> None:
    # The committed seat draw (draw.py) is SEAT_DRAW.md: hashing, and a fresh secret for
    # the service; test_seat_draw.py holds it to the standard library and the deal.
    files = sorted(path for path in CORE.glob("*.py") if path.name != "draw.py")
    assert len(files) >= 9
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                if isinstance(node, ast.Attribute):
                    assert node.attr not in CLOCK, f"{path.name} reads the clock: .{node.attr}"
                continue
            for name in names:
                if name.startswith("president."):
                    allowed = name.startswith(("president.rules", "president.tournament"))
                    assert allowed, f"{path.name} imports {name}"
                else:
                    assert name.split(".")[0] in ALLOWED, f"{path.name} imports {name}"


def test_importing_the_core_loads_no_service_library() -> None:
    code = "import sys, president.tournament.decide; print(','.join(sorted(sys.modules)))"
    loaded = set(
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
        .stdout.strip()
        .split(",")
    )
    # (``random`` is loaded, by the deal's ``secrets``, for the service's fresh secrets;
    # the test above keeps the core from importing it.)
    for library in ("grpc", "nats", "sqlalchemy", "prometheus_client", "socket"):
        assert library not in loaded
