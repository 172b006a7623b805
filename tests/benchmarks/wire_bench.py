"""What a change costs the gateway to put on the wire, on one core; asserts nothing.

Every change of a table is sent to each seat and to its spectators as one
``WatchResponse`` per seat, built whole and serialized once
(:meth:`president.services.gateway.streams.entries.Entry.watch_response`). For the
changes of a whole game (two rounds of ``classic``, four seats) it prints the
CPU time per change for four seats and the spectators:

- the whole of it;
- the parts alone (the public view, each seat's part with its legal moves):
  what is left of the whole is putting each message together and
  serializing it, the most a trick on the wire's bytes could save.

Compare with the gateway's CPU per client action that ``e2e_bench.py`` prints:
a speed trick stays only if it saves 5% of that.

Run: ``make bench`` or ``.venv/bin/python tests/benchmarks/wire_bench.py``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from president.hosting.seat_views import public_view, seat_part  # noqa: E402
from president.services.gateway.streams.entries import Entry  # noqa: E402
from tests.support.gateway_entries import game_entries  # noqa: E402

SEATS: list[int | None] = [0, 1, 2, 3, None]
SAMPLES = 25


def _entry(entry: Entry) -> Entry:
    """``entry`` with nothing built yet."""
    return Entry(
        entry.envelope, entry.message, entry.table, clock=entry.clock, made_at=entry.made_at
    )


def _us_per_change(entries: list[Entry], run: Callable[[Entry], object]) -> list[float]:
    samples = []
    for _ in range(SAMPLES):
        started = time.process_time()
        for entry in entries:
            run(entry)
        samples.append((time.process_time() - started) / len(entries) * 1e6)
    return samples


def _send(entry: Entry) -> None:
    for seat in SEATS:
        entry.watch_response(seat)


def _parts(entry: Entry) -> None:
    public_view(entry.table)
    for seat in range(len(entry.table.game.seats)):
        seat_part(entry.table, seat)


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    with tempfile.TemporaryDirectory() as folder:
        entries = [e for e in game_entries(Path(folder)) if e.table.game.phase == "round"]
    gc.disable()
    rows = {
        "the whole change": _us_per_change(entries, lambda entry: _send(_entry(entry))),
        "the parts: public view and 4 seats' parts": _us_per_change(entries, _parts),
    }
    gc.enable()
    print(f"{len(entries)} changes of a classic game, 4 seats and spectators (CPU µs per change)")
    for name, samples in rows.items():
        median, least = statistics.median(samples), min(samples)
        print(f"  {name:44s} median {median:6.1f}  min {least:6.1f}")


if __name__ == "__main__":
    main()
