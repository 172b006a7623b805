"""Whether a call may run now: the rate limits and stream limits, for one call's peer.

The entrypoint (:mod:`president.services.gateway.api.handlers`) asks before any
work: :meth:`Admission.call` for every call (and every stream's opening),
:meth:`Admission.running` around a call (a costly one waits for its turn in the
:class:`~president.servicekit.fair_queue.FairQueue`), :meth:`Admission.stream`
around an open stream, :meth:`Admission.command` for each command a Session
carries. A refusal is a
:class:`~president.servicekit.errors.ServiceError` (RESOURCE_EXHAUSTED).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import grpc

from president.servicekit.config.gateway import LimitSettings
from president.servicekit.fair_queue import FairQueue
from president.servicekit.peers import Peers
from president.servicekit.stream_limits import StreamLimits
from president.services.gateway.limits.rate_limits import SESSION_COMMAND, RateLimits

Context = grpc.aio.ServicerContext[Any, Any]

#: The calls that cost far more than a play: a password's hash, a new account, a new table.
COSTLY = frozenset({"LogIn", "Register", "CreateGuest", "CreateTable"})


def costly_queue(limits: LimitSettings) -> FairQueue:
    """The configured bound of costly calls (the waiting ones scaled, the slots not)."""
    costly, scale = limits.costly, limits.scale
    return FairQueue(
        costly.slots,
        max(1, int(costly.waiting * scale)),
        max(1, int(costly.waiting_per_peer * scale)),
    )


@dataclass
class Admission:
    """The gateway's limits, asked with a call's context."""

    rates: RateLimits = field(default_factory=RateLimits)
    streams: StreamLimits = field(default_factory=StreamLimits)
    peers: Peers = field(default_factory=Peers)
    costly: FairQueue = field(default_factory=lambda: costly_queue(LimitSettings()))

    @classmethod
    def configured(cls, limits: LimitSettings, edge_secret: str) -> Admission:
        """The configured limits; addresses named by the web edge believed with
        ``edge_secret``."""
        return cls(
            RateLimits.configured(limits),
            StreamLimits.configured(limits),
            Peers(edge_secret),
            costly_queue(limits),
        )

    @classmethod
    def from_env(cls, edge_secret: str, environ: Mapping[str, str] | None = None) -> Admission:
        """:meth:`configured` with the limits read from ``environ`` (the process's by
        default), as a gateway replica reads them."""
        return cls.configured(LimitSettings.from_env(environ), edge_secret)

    def peer(self, context: Context) -> str:
        """The address the call is counted from."""
        return self.peers.of(context.peer(), context.invocation_metadata())

    def call(self, method: str, context: Context, who: str = "") -> None:
        """Count a call of ``method`` by ``who`` ("" for none); refused over a limit."""
        self.rates.admit(method, self.peer(context), who)

    def running(self, method: str, context: Context) -> AbstractAsyncContextManager[None]:
        """Around a call of ``method``: a costly one holds a slot of the fair queue (keyed by
        its peer) while it runs, waiting for its turn; SERVER_BUSY when the queue is full."""
        if method not in COSTLY:
            return nullcontext()
        return self.costly.slot(self.peer(context))

    def opened(self, method: str, peer: str, who: str) -> None:
        """Count a call of ``method`` from ``peer`` found already (the spectators' door)."""
        self.rates.admit(method, peer, who)

    def command(self, peer: str, who: str) -> None:
        """Count one command sent on a Session stream."""
        self.rates.admit_class(SESSION_COMMAND, peer, who)

    def stream(self, peer: str, who: str) -> AbstractContextManager[None]:
        """Hold a stream slot of ``who`` from ``peer`` while it is open."""
        return self.streams.holding(who, peer)
