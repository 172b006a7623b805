"""How often a client may make each costly call: token buckets per identity and per peer.

Every gateway method belongs to a call class (:data:`METHOD_CLASS`). Each
class has two limits, ``calls`` per ``seconds``: one per identity (the
account; for ``LogIn`` the account name being logged into, so guessing a
password is slow from any number of addresses) and one per peer address
(the caller's IP, an IPv6 caller's /64; behind the web edge the browser's,
see :mod:`president.servicekit.peers`). A limit is a token bucket: it
holds ``calls`` tokens, refills ``calls / seconds`` a second, and each call
takes one. A call that finds either bucket empty is refused before it runs
(nothing changed) with RESOURCE_EXHAUSTED, the reason RATE_LIMITED, a
sentence, and when to try again: the seconds in the ErrorInfo metadata
(``retry_after_seconds``) and a ``google.rpc.RetryInfo``.

The limits are settings (:class:`~president.servicekit.config.gateway.RateSettings`):
``PRESIDENT_RATE_<CLASS>`` (per identity) and ``PRESIDENT_RATE_<CLASS>_PEER``
(per peer), each ``calls/seconds`` or ``off``; ``PRESIDENT_LIMITS_SCALE``
multiplies every one (the local stacks of ``president run`` and the tests
raise them, every client being on loopback). ``docs/settings.md`` lists the
classes and defaults.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from president.servicekit.config.gateway import Limit, LimitSettings, RateSettings
from president.servicekit.errors import RETRY_AFTER, Code, ServiceError

#: Buckets kept per limit; past this, full buckets (nothing to remember) are forgotten first.
MAX_BUCKETS = 50_000
RATE_LIMITED = "RATE_LIMITED"


@dataclass(frozen=True)
class CallClass:
    """A kind of call and its default limits (None: not limited that way)."""

    name: str
    identity: Limit | None
    peer: Limit | None
    #: What the refusal's sentence calls it.
    what: str


#: The classes and what a refusal calls them; their limits are settings (:class:`RateSettings`).
WHAT = {
    "create_table": "tables created",
    "seat": "joins, spectates and seat changes",
    "guest": "guest accounts created",
    "password": "log-ins and registrations",
    "account": "account calls",
    "check_deal": "deal checks",
    "read": "reads",
    "command": "commands",
    "stream": "streams opened",
}


def classes(rates: RateSettings, scale: float = 1.0) -> dict[str, CallClass]:
    """The call classes with ``rates``' limits, multiplied by ``scale``."""

    def scaled(limit: Limit | None) -> Limit | None:
        return limit.scaled(scale) if limit is not None else None

    return {
        name: CallClass(
            name,
            scaled(getattr(rates, name)),
            scaled(getattr(rates, f"{name}_peer")),
            what,
        )
        for name, what in WHAT.items()
    }


#: The classes with their default limits.
CLASSES = classes(RateSettings())

#: The call class of every gateway method (a Session's commands count as ``command``).
METHOD_CLASS = {
    "CreateTable": "create_table",
    "JoinTable": "seat",
    "QuickPlay": "create_table",
    "Spectate": "seat",
    "AddBot": "seat",
    "RemoveSeat": "seat",
    "HandOverHost": "seat",
    "MuteSeat": "seat",
    "CreateGuest": "guest",
    "Register": "password",
    "LogIn": "password",
    "Refresh": "account",
    "LogOut": "account",
    "LogOutEverywhere": "account",
    "WhoAmI": "account",
    "CheckDeal": "check_deal",
    "ListTables": "read",
    "ListCommitments": "read",
    "GetOperatorKeys": "read",
    "GetActivity": "read",
    "GetTable": "read",
    "GetScores": "read",
    "PreviewPlay": "read",
    "GetRatings": "read",
    "GetLeaderboard": "read",
    "GetHistory": "read",
    "GetHeadToHead": "read",
    "StartGame": "command",
    "Play": "command",
    "Pass": "command",
    "ReturnCards": "command",
    "React": "command",
    "SendChat": "command",
    "Leave": "command",
    "HostAction": "command",
    "Watch": "stream",
    "Session": "stream",
    "CreateTournament": "create_table",
    "ListTournaments": "read",
    "GetTournament": "read",
    "EnterTournament": "seat",
    "WithdrawTournament": "seat",
    "InviteToTournament": "seat",
    "CancelTournament": "seat",
}
#: The class of one command sent on a Session stream.
SESSION_COMMAND = "command"


class Buckets:
    """Token buckets of one limit, one per key, kept in a bounded table."""

    def __init__(
        self, limit: Limit, clock: Callable[[], float], max_buckets: int = MAX_BUCKETS
    ) -> None:
        self.limit = limit
        self._clock = clock
        self._max = max_buckets
        #: key -> (tokens left, when counted)
        self._held: dict[str, tuple[float, float]] = {}

    def take(self, key: str) -> float:
        """Take a token for ``key``: 0.0 when there was one, else the seconds until there is."""
        now = self._clock()
        tokens, then = self._held.get(key, (self.limit.calls, now))
        tokens = min(self.limit.calls, tokens + (now - then) * self.limit.per_second)
        if tokens < 1.0:
            self._held[key] = (tokens, now)
            return (1.0 - tokens) / self.limit.per_second
        self._held[key] = (tokens - 1.0, now)
        if len(self._held) > self._max:
            self._forget(now)
        return 0.0

    def _forget(self, now: float) -> None:
        """Drop the buckets that refilled (they hold nothing a new one would not), then, if
        that is not enough, the oldest half."""
        refill = self.limit.per_second
        full = [
            key
            for key, (tokens, then) in self._held.items()
            if tokens + (now - then) * refill >= self.limit.calls
        ]
        for key in full:
            del self._held[key]
        if len(self._held) > self._max:
            for key in list(self._held)[: len(self._held) // 2]:
                del self._held[key]


class RateLimits:
    """The gateway's limits: :meth:`admit` counts a call and refuses it over a limit."""

    def __init__(
        self,
        classes: Mapping[str, CallClass] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.classes = dict(classes if classes is not None else CLASSES)
        self._by_identity = {
            name: Buckets(item.identity, clock)
            for name, item in self.classes.items()
            if item.identity is not None
        }
        self._by_peer = {
            name: Buckets(item.peer, clock)
            for name, item in self.classes.items()
            if item.peer is not None
        }

    @classmethod
    def configured(cls, limits: LimitSettings) -> RateLimits:
        """The configured limits, scaled."""
        return cls(classes(limits.rates, limits.scale))

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> RateLimits:
        """:meth:`configured` with the limits read from ``environ``."""
        return cls.configured(LimitSettings.from_env(environ))

    def admit(self, method: str, peer: str, who: str = "") -> None:
        """Count a call of ``method`` by ``who`` (an account, or "" when none) from ``peer``;
        RESOURCE_EXHAUSTED (RATE_LIMITED) with a retry hint when a limit is reached."""
        self.admit_class(METHOD_CLASS[method], peer, who)

    def admit_class(self, name: str, peer: str, who: str = "") -> None:
        """:meth:`admit` by call class."""
        by_peer = self._by_peer.get(name)
        wait = by_peer.take(peer) if by_peer is not None else 0.0
        if wait:
            raise rate_limited(self.classes[name], "from your address", wait)
        by_identity = self._by_identity.get(name) if who else None
        wait = by_identity.take(who) if by_identity is not None else 0.0
        if wait:
            raise rate_limited(self.classes[name], "for this account", wait)


def rate_limited(item: CallClass, whose: str, wait: float) -> ServiceError:
    """The refusal of a call over ``item``'s limit, retried after ``wait`` seconds."""
    seconds = max(math.ceil(wait * 10) / 10, 0.1)
    return ServiceError(
        Code.RESOURCE_EXHAUSTED,
        RATE_LIMITED,
        f"too many {item.what} {whose} in a short time: try again in {seconds:.1f} s",
        {RETRY_AFTER: f"{seconds:.1f}", "limit": item.name},
    )
