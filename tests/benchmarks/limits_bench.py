"""What the gateway's limits cost a call, on one core: prints numbers, asserts nothing.

- the rate limits' count of one call (its peer's bucket and its identity's),
  for one busy client and for many clients taking turns;
- a refused call (the refusal built with its retry hint);
- the whole admission as the entrypoint asks it: the peer read from the
  call (plain, and named by the web edge with its secret), then the count;
- a stream's slot taken and given back.

Run: ``make bench`` or ``.venv/bin/python tests/benchmarks/limits_bench.py``.
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable
from typing import Any

from president.servicekit.errors import ServiceError
from president.servicekit.peers import EDGE_SECRET, FORWARDED_PEER, Peers
from president.servicekit.stream_limits import StreamLimits
from president.services.gateway.limits.admission import Admission
from president.services.gateway.limits.rate_limits import RateLimits

#: Every limit raised so far that the measured calls are all admitted.
NEVER_REACHED = {"PRESIDENT_LIMITS_SCALE": "1000000000"}


class Call:
    """What the entrypoint reads of a call: its peer and metadata (a grpc.aio context's)."""

    def __init__(self, peer: str, metadata: tuple[tuple[str, str], ...]) -> None:
        self._peer = peer
        self._metadata = metadata

    def peer(self) -> str:
        return self._peer

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata


def _rate(what: str, count: int, run: Callable[[int], object]) -> None:
    """One line: ``run``'s cost per call over ``count`` calls (timeit's clock)."""
    calls = iter(range(count))
    spent = timeit.timeit(lambda: run(next(calls)), number=count)
    print(f"{what:<52} {spent / count * 1e6:8.2f} µs each   {count / spent:12,.0f}/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200_000, help="calls per measurement")
    count = parser.parse_args().calls
    open_limits = RateLimits.from_env(NEVER_REACHED)
    _rate("admit: one client", count, lambda _: open_limits.admit("Play", "10.0.0.1", "acct-1"))
    clients = [(f"10.0.{i // 250}.{i % 250}", f"acct-{i}") for i in range(10_000)]

    def many(index: int) -> None:
        peer, who = clients[index % len(clients)]
        open_limits.admit("Play", peer, who)

    _rate("admit: 10,000 clients taking turns", count, many)
    tight = RateLimits.from_env({"PRESIDENT_RATE_COMMAND": "1/3600"})
    tight.admit("Play", "10.0.0.9", "acct-9")

    def refused(_: int) -> None:
        try:
            tight.admit("Play", "10.0.0.9", "acct-9")
        except ServiceError:
            pass

    _rate("admit: refused, with its retry hint", count, refused)
    plain = Admission(open_limits, StreamLimits(), Peers("edge-secret"))
    direct: Any = Call("ipv4:10.0.0.1:50123", (("authorization", "Bearer x"),))
    _rate("admission of a native call (peer + count)", count, lambda _: plain.call("Play", direct))
    via_edge: Any = Call(
        "ipv4:10.0.0.2:50124",
        (
            ("authorization", "Bearer x"),
            (FORWARDED_PEER, "198.51.100.7"),
            (EDGE_SECRET, "edge-secret"),
        ),
    )
    _rate(
        "admission of a call through the web edge",
        count,
        lambda _: plain.call("Play", via_edge),
    )
    streams = StreamLimits()

    def slot(_: int) -> None:
        with streams.holding("acct-1", "10.0.0.1"):
            pass

    _rate("a stream slot taken and given back", count, slot)


if __name__ == "__main__":
    main()
