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

Limits come from the environment: ``PRESIDENT_RATE_<CLASS>`` (per identity)
and ``PRESIDENT_RATE_<CLASS>_PEER`` (per peer), each ``calls/seconds`` or
``off``; ``PRESIDENT_LIMITS_SCALE`` multiplies every one (the local stacks
of ``president run`` and the tests raise them, every client being on
loopback). docs/operations.md ("Rate limits") lists the classes and defaults.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import grpc

from president.servicekit.errors import RETRY_AFTER, ServiceError

#: Buckets kept per limit; past this, full buckets (nothing to remember) are forgotten first.
MAX_BUCKETS = 50_000
RATE_LIMITED = "RATE_LIMITED"
#: The variables of a class's limits, per identity and per peer (its name in capitals).
IDENTITY_VARIABLE = "PRESIDENT_RATE_{}"
PEER_VARIABLE = "PRESIDENT_RATE_{}_PEER"


@dataclass(frozen=True)
class Limit:
    """At most ``calls`` calls at once, refilled at ``calls`` per ``seconds``."""

    calls: float
    seconds: float

    @property
    def per_second(self) -> float:
        return self.calls / self.seconds

    def scaled(self, factor: float) -> Limit:
        return Limit(self.calls * factor, self.seconds)

    @classmethod
    def parse(cls, name: str, text: str) -> Limit | None:
        """``calls/seconds`` (``off``: no limit); a clear exit for anything else."""
        if text.strip().lower() == "off":
            return None
        calls, slash, seconds = text.partition("/")
        try:
            limit = cls(float(calls), float(seconds)) if slash else None
        except ValueError:
            limit = None
        if limit is None or not (limit.calls >= 1 and limit.seconds > 0):
            raise SystemExit(f"{name} must read calls/seconds (such as 30/60) or off, not {text!r}")
        return limit


@dataclass(frozen=True)
class CallClass:
    """A kind of call and its default limits (None: not limited that way)."""

    name: str
    identity: Limit | None
    peer: Limit | None
    #: What the refusal's sentence calls it.
    what: str


#: The classes, with their defaults: a person playing never meets them, a script soon does.
CLASSES = {
    item.name: item
    for item in (
        CallClass("create_table", Limit(20, 60), Limit(60, 60), "tables created"),
        CallClass("seat", Limit(60, 60), Limit(300, 60), "joins, spectates and seat changes"),
        CallClass("guest", None, Limit(30, 60), "guest accounts created"),
        CallClass("password", Limit(10, 60), Limit(30, 60), "log-ins and registrations"),
        CallClass("account", Limit(60, 60), Limit(600, 60), "account calls"),
        CallClass("check_deal", Limit(30, 60), Limit(300, 60), "deal checks"),
        CallClass("read", Limit(120, 10), Limit(1200, 10), "reads"),
        CallClass("command", Limit(100, 10), Limit(2000, 10), "commands"),
        CallClass("stream", Limit(60, 60), Limit(600, 60), "streams opened"),
    )
}

#: The call class of every gateway method (a Session's commands count as ``command``).
METHOD_CLASS = {
    "CreateTable": "create_table",
    "JoinTable": "seat",
    "Spectate": "seat",
    "AddBot": "seat",
    "RemoveSeat": "seat",
    "HandOverHost": "seat",
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
    "Leave": "command",
    "HostAction": "command",
    "Watch": "stream",
    "Session": "stream",
}
#: The class of one command sent on a Session stream.
SESSION_COMMAND = "command"


def env_scale(environ: Mapping[str, str]) -> float:
    """``PRESIDENT_LIMITS_SCALE``: how much every limit is multiplied by (1 by default)."""
    raw = environ.get("PRESIDENT_LIMITS_SCALE", "")
    try:
        scale = float(raw) if raw else 1.0
    except ValueError:
        scale = 0.0
    if not scale > 0 or math.isinf(scale):
        raise SystemExit(f"PRESIDENT_LIMITS_SCALE must be a positive number, not {raw!r}")
    return scale


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
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> RateLimits:
        """The defaults, each overridden by its variable, all scaled."""
        scale = env_scale(environ)
        classes = {}
        for name, item in CLASSES.items():
            limits = []
            for variable, default in (
                (IDENTITY_VARIABLE.format(name.upper()), item.identity),
                (PEER_VARIABLE.format(name.upper()), item.peer),
            ):
                raw = environ.get(variable, "")
                limit = Limit.parse(variable, raw) if raw else default
                limits.append(limit.scaled(scale) if limit is not None else None)
            classes[name] = CallClass(name, limits[0], limits[1], item.what)
        return cls(classes)

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
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        RATE_LIMITED,
        f"too many {item.what} {whose} in a short time: try again in {seconds:.1f} s",
        {RETRY_AFTER: f"{seconds:.1f}", "limit": item.name},
    )
