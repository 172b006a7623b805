"""Which address a call comes from, for the per-peer limits.

A native client's address is its connection's (an IPv6 address counts by
its /64, which one subscriber usually holds whole). A browser's calls reach
the gateway through the web edge, one connection for every browser, so the
edge names the browser's address in the metadata ``x-president-peer`` and
proves it is the edge with ``x-president-edge-secret``: the secret both
share (``PRESIDENT_EDGE_SECRET``). The gateway believes the named address
only with the right secret; without one configured it believes none, and a
caller who sends the header without the secret is counted by its own
connection's address.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
from collections.abc import Iterable
from typing import Any

FORWARDED_PEER = "x-president-peer"
EDGE_SECRET = "x-president-edge-secret"


def address_of(peer: str) -> str:
    """The counted address of a gRPC peer string (``ipv4:1.2.3.4:5``, ``ipv6:[::1]:5``)."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return rest.rpartition(":")[0]
    if kind == "ipv6":
        return counted(rest.rpartition(":")[0].strip("[]"))
    return peer


@functools.lru_cache(maxsize=65_536)
def counted(address: str) -> str:
    """An address as it is counted: IPv4 whole, IPv6 by its /64 ("" when not an address)."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return ""
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class Peers:
    """Finds a call's peer address: its connection's, or the edge's word for the browser's."""

    def __init__(self, edge_secret: str = "") -> None:
        self._secret = edge_secret.encode()

    def of(self, peer: str, metadata: Iterable[tuple[str, Any]] | None) -> str:
        """The address to count a call from ``peer`` (context.peer()) with ``metadata``."""
        if self._secret:
            named = proof = ""
            for key, value in metadata or ():
                if key == FORWARDED_PEER:
                    named = str(value)
                elif key == EDGE_SECRET:
                    proof = str(value)
            if named and proof and hmac.compare_digest(proof.encode(), self._secret):
                address = counted(named)
                if address:
                    return address
        return address_of(peer)
