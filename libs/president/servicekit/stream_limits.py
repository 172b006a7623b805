"""How many Watch and Session streams may be open at once: per identity, per peer, in all.

A stream holds a feed, a queue and a task for as long as it is open, so
they are counted: at most ``PRESIDENT_STREAMS_PER_IDENTITY`` (default 16)
open streams per account and ``PRESIDENT_STREAMS_PER_PEER`` (default 256) per
peer address (see :mod:`president.servicekit.peers`), both multiplied
by ``PRESIDENT_LIMITS_SCALE``. One more is refused RESOURCE_EXHAUSTED with
the reason TOO_MANY_STREAMS before it opens; closing one frees its slot. The
streams of one connection are bounded by HTTP/2 itself
(``PRESIDENT_GATEWAY_MAX_STREAMS_PER_CONNECTION``, see
:func:`president.servicekit.server.run`).

The web edge counts the streams it forwards with the same class
(:mod:`president.services.web.upstream`), with a ``total`` too: the streams
its connections to the gateway can carry. Past it a stream is refused
RESOURCE_EXHAUSTED with the reason STREAMS_FULL and a retry hint, rather
than queued behind a full connection.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from president.servicekit.config.gateway import LimitSettings, StreamSettings
from president.servicekit.errors import RETRY_AFTER, Code, ServiceError

PER_IDENTITY = StreamSettings().per_identity
PER_PEER = StreamSettings().per_peer
TOO_MANY_STREAMS = "TOO_MANY_STREAMS"
STREAMS_FULL = "STREAMS_FULL"
#: When a refused stream may try again once every slot was taken.
FULL_RETRY_SECONDS = 5.0


class StreamLimits:
    """Counts the open streams of each identity and peer (and all of them, up to ``total``
    when it is set)."""

    def __init__(
        self, per_identity: int = PER_IDENTITY, per_peer: int = PER_PEER, total: int = 0
    ) -> None:
        self.per_identity = per_identity
        self.per_peer = per_peer
        self.total = total
        self.open = 0
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
        """A slot for one stream of ``identity`` from ``peer`` while the block runs (an
        empty ``identity`` is not counted as one)."""
        if self._peers[peer] >= self.per_peer:
            raise too_many("from your address", self.per_peer)
        if identity and self._identities[identity] >= self.per_identity:
            raise too_many("for this account", self.per_identity)
        if self.total and self.open >= self.total:
            raise full(self.total)
        held = (
            ((self._peers, peer), (self._identities, identity))
            if identity
            else ((self._peers, peer),)
        )
        for counts, key in held:
            counts[key] += 1
        self.open += 1
        try:
            yield
        finally:
            self.open -= 1
            for counts, key in held:
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


def full(total: int) -> ServiceError:
    return ServiceError(
        Code.RESOURCE_EXHAUSTED,
        STREAMS_FULL,
        f"the server carries {total} streams already, all it can: "
        f"try again in {FULL_RETRY_SECONDS:.0f} s",
        {"limit": str(total), RETRY_AFTER: f"{FULL_RETRY_SECONDS:.1f}"},
    )
