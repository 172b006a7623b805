"""How many Watch and Session streams may be open at once, per identity and per peer.

A stream holds a feed, a queue and a task for as long as it is open, so
they are counted: at most ``PRESIDENT_STREAMS_PER_IDENTITY`` (default 16)
open streams per account and ``PRESIDENT_STREAMS_PER_PEER`` (default 256) per
peer address (see :mod:`president.servicekit.peers`), both multiplied
by ``PRESIDENT_LIMITS_SCALE``. One more is refused RESOURCE_EXHAUSTED with
the reason TOO_MANY_STREAMS before it opens; closing one frees its slot. The
streams of one connection are bounded by HTTP/2 itself
(``PRESIDENT_GATEWAY_MAX_STREAMS_PER_CONNECTION``, see
:func:`president.servicekit.server.run`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from president.servicekit.config.gateway import LimitSettings, StreamSettings
from president.servicekit.errors import Code, ServiceError

PER_IDENTITY = StreamSettings().per_identity
PER_PEER = StreamSettings().per_peer
TOO_MANY_STREAMS = "TOO_MANY_STREAMS"


class StreamLimits:
    """Counts the open streams of each identity and peer."""

    def __init__(self, per_identity: int = PER_IDENTITY, per_peer: int = PER_PEER) -> None:
        self.per_identity = per_identity
        self.per_peer = per_peer
        self._identities: Counter[str] = Counter()
        self._peers: Counter[str] = Counter()

    @classmethod
    def configured(cls, limits: LimitSettings) -> StreamLimits:
        """The configured limits, scaled (at least one each)."""
        scale, streams = limits.scale, limits.streams
        return cls(max(1, int(streams.per_identity * scale)), max(1, int(streams.per_peer * scale)))

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> StreamLimits:
        """:meth:`configured` with the limits read from ``environ``."""
        return cls.configured(LimitSettings.from_env(environ))

    @contextmanager
    def holding(self, identity: str, peer: str) -> Iterator[None]:
        """A slot for one stream of ``identity`` from ``peer`` while the block runs."""
        if self._peers[peer] >= self.per_peer:
            raise too_many("from your address", self.per_peer)
        if self._identities[identity] >= self.per_identity:
            raise too_many("for this account", self.per_identity)
        self._peers[peer] += 1
        self._identities[identity] += 1
        try:
            yield
        finally:
            for counts, key in ((self._peers, peer), (self._identities, identity)):
                counts[key] -= 1
                if counts[key] <= 0:
                    del counts[key]


def too_many(whose: str, limit: int) -> ServiceError:
    return ServiceError(
        Code.RESOURCE_EXHAUSTED,
        TOO_MANY_STREAMS,
        f"{limit} streams are open {whose} already, the most allowed: "
        "close one (or wait for one to end) before opening another",
        {"limit": str(limit)},
    )
