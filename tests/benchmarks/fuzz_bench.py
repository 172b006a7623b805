"""The gateway's input fuzzing (tests/e2e/test_fuzz_inputs.py) with many more examples.

``make test`` runs it with 12 examples per method and check; this runs
``--examples`` (default 150) and prints how long it took and how many calls
it made. It asserts nothing itself: a failure is pytest's, printed with its
falsifying example.

Run: ``.venv/bin/python tests/benchmarks/fuzz_bench.py [--examples 150]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=150, help="examples per method and check")
    args = parser.parse_args()
    env = {**os.environ, "PRESIDENT_FUZZ_EXAMPLES": str(args.examples)}
    started = time.perf_counter()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/e2e/test_fuzz_inputs.py",
        ],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    tail = run.stdout.strip().splitlines()[-1:] or ["(no output)"]
    print(f"fuzz: {args.examples} examples per method and check, {seconds:.1f} s: {tail[0]}")
    if run.returncode:
        print(run.stdout[-4000:])
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
