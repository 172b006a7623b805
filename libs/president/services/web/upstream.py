"""The edge's connections to the gateway, and how many streams each browser may hold on them.

Every browser's calls reach the gateway through the edge. On one HTTP/2
connection they shared its cap of open streams
(``PRESIDENT_GATEWAY_MAX_STREAMS_PER_CONNECTION``): a few dozen addresses,
each inside every limit of the gateway, filled it with Watch streams, and
every other browser's calls then waited behind them. So:

- unary calls (reads, plays, sign-in) have a connection of their own, which
  no stream ever takes a slot of;
- the streams go over ``PRESIDENT_WEB_UPSTREAM_CONNECTIONS`` connections,
  each new one on the connection carrying the fewest;
- the edge counts the streams it forwards before it forwards them, with the
  gateway's own :class:`~president.servicekit.stream_limits.StreamLimits`:
  per browser address (``PRESIDENT_WEB_STREAMS_PER_PEER``), per identity (the
  bearer token; the gateway's ``PRESIDENT_STREAMS_PER_IDENTITY``), both scaled by
  ``PRESIDENT_LIMITS_SCALE``, and in all (the connections times their cap). One
  more is refused RESOURCE_EXHAUSTED, ``TOO_MANY_STREAMS`` or, when every slot
  is taken, ``STREAMS_FULL`` with a retry hint; it is never queued.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

import grpc

from president.servicekit.channels import gateway_channel
from president.servicekit.config.web import WebSettings
from president.servicekit.peers import counted
from president.servicekit.stream_limits import StreamLimits


def identity_key(authorization: str) -> str:
    """Whom a stream is counted for: its bearer token (a digest; "" when none). The edge
    does not verify tokens, so it counts tokens, which no one can take from another."""
    if not authorization:
        return ""
    return hashlib.sha256(authorization.encode()).hexdigest()


def peer_key(client_address: str) -> str:
    """The browser's counted address (IPv6 by its /64) from uvicorn's ``host:port``."""
    host = client_address.rpartition(":")[0] or client_address
    return counted(host.strip("[]")) or host


class Upstream:
    """One channel for unary calls, a pool for streams, and the streams' limits."""

    def __init__(
        self, unary: grpc.aio.Channel, streams: list[grpc.aio.Channel], limits: StreamLimits
    ) -> None:
        self.unary = unary
        self.streams = streams
        self.limits = limits
        self._carried = [0] * len(streams)

    @classmethod
    def configured(cls, settings: WebSettings) -> Upstream:
        """The channels to the configured gateway, and the configured limits."""
        limits = settings.limits
        scale = limits.scale
        per_connection = limits.streams.per_connection
        tls, keepalive = settings.shared.tls, settings.shared.keepalive
        return cls(
            gateway_channel(settings.gateway, tls, keepalive),
            [
                gateway_channel(settings.gateway, tls, keepalive)
                for _ in range(settings.upstream_connections)
            ],
            StreamLimits(
                max(1, int(limits.streams.per_identity * scale)),
                max(1, int(settings.streams_per_peer * scale)),
                total=per_connection * settings.upstream_connections,
            ),
        )

    @contextmanager
    def holding(self, identity: str, peer: str) -> Iterator[int]:
        """A slot for one stream while the block runs, and the index of the stream channel
        to carry it (the one carrying fewest); a refusal
        (:class:`~president.servicekit.errors.ServiceError`) over a limit."""
        with self.limits.holding(identity, peer):
            index = min(range(len(self._carried)), key=self._carried.__getitem__)
            self._carried[index] += 1
            try:
                yield index
            finally:
                self._carried[index] -= 1

    async def close(self) -> None:
        """Close every channel."""
        for channel in (self.unary, *self.streams):
            await channel.close()
