"""The gateway's settings: its role, its limits (rates, streams), its spectators (the audience
and the audience replica's HTTP door) and resumed watches.

A rate limit is ``calls/seconds`` (tokens refilled at ``calls`` per ``seconds``)
or ``off``, per identity (``PRESIDENT_RATE_<CLASS>``) and per peer address
(``PRESIDENT_RATE_<CLASS>_PEER``); ``PRESIDENT_LIMITS_SCALE`` multiplies every
rate and stream limit (the local stacks raise them: every client is on
loopback). :mod:`president.services.gateway.limits.rate_limits` counts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from president.servicekit.config import LeaseSettings, Settings
from president.servicekit.config.fields import (
    FromEnv,
    choice,
    group,
    kibibytes,
    milliseconds,
    number,
    origins,
    positive,
    public_keys,
    setting,
    whole,
)
from president.servicekit.config.timer import WaitSettings

PLAYERS = "players"
AUDIENCE = "audience"
ROLES = (PLAYERS, AUDIENCE)


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

    def __str__(self) -> str:
        return f"{self.calls:g}/{self.seconds:g}"

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


def _rate(name: str, default: Limit | None, what: str, whose: str) -> dict[str, Any]:
    """The arguments of a rate limit's :func:`setting`."""
    return {
        "variable": f"PRESIDENT_RATE_{name.upper()}",
        "default": default,
        "meaning": f"gateway: {what} {whose} (calls/seconds, or off)",
        "parse": Limit.parse,
        "shown": str(default) if default is not None else "off",
    }


@dataclass(frozen=True)
class RateSettings(FromEnv):
    """Each call class's limits per account and per address (None: not limited that way);
    a person playing never meets them, a script soon does."""

    create_table: Limit | None = setting(
        **_rate("create_table", Limit(20, 60), "tables created", "per account")
    )
    create_table_peer: Limit | None = setting(
        **_rate("create_table_peer", Limit(60, 60), "tables created", "per address")
    )
    seat: Limit | None = setting(
        **_rate("seat", Limit(60, 60), "joins, spectates and seat changes", "per account")
    )
    seat_peer: Limit | None = setting(
        **_rate("seat_peer", Limit(300, 60), "joins, spectates and seat changes", "per address")
    )
    guest: Limit | None = setting(**_rate("guest", None, "guest accounts created", "per account"))
    guest_peer: Limit | None = setting(
        **_rate("guest_peer", Limit(30, 60), "guest accounts created", "per address")
    )
    password: Limit | None = setting(
        **_rate("password", Limit(10, 60), "log-ins and registrations", "per account")
    )
    password_peer: Limit | None = setting(
        **_rate("password_peer", Limit(30, 60), "log-ins and registrations", "per address")
    )
    account: Limit | None = setting(
        **_rate("account", Limit(60, 60), "account calls", "per account")
    )
    account_peer: Limit | None = setting(
        **_rate("account_peer", Limit(600, 60), "account calls", "per address")
    )
    check_deal: Limit | None = setting(
        **_rate("check_deal", Limit(30, 60), "deal checks", "per account")
    )
    check_deal_peer: Limit | None = setting(
        **_rate("check_deal_peer", Limit(300, 60), "deal checks", "per address")
    )
    read: Limit | None = setting(**_rate("read", Limit(120, 10), "reads", "per account"))
    read_peer: Limit | None = setting(**_rate("read_peer", Limit(1200, 10), "reads", "per address"))
    command: Limit | None = setting(**_rate("command", Limit(100, 10), "commands", "per account"))
    command_peer: Limit | None = setting(
        **_rate("command_peer", Limit(2000, 10), "commands", "per address")
    )
    stream: Limit | None = setting(
        **_rate("stream", Limit(60, 60), "streams opened", "per account")
    )
    stream_peer: Limit | None = setting(
        **_rate("stream_peer", Limit(600, 60), "streams opened", "per address")
    )


@dataclass(frozen=True)
class StreamSettings(FromEnv):
    """How many Watch and Session streams may be open at once."""

    per_identity: int = setting(
        "PRESIDENT_STREAMS_PER_IDENTITY", 16, "gateway: open streams per account", whole
    )
    per_peer: int = setting(
        "PRESIDENT_STREAMS_PER_PEER", 256, "gateway: open streams per address", whole
    )
    per_connection: int = setting(
        "PRESIDENT_GATEWAY_MAX_STREAMS_PER_CONNECTION",
        1024,
        "gateway: open streams per HTTP/2 connection; the web edge opens at most this many on "
        "each of its PRESIDENT_WEB_UPSTREAM_CONNECTIONS (set it alike on both); not scaled",
        whole,
    )

    def __post_init__(self) -> None:
        if self.per_identity < 1 or self.per_peer < 1:
            raise SystemExit("PRESIDENT_STREAMS_PER_IDENTITY and _PER_PEER must be at least 1")
        if self.per_connection < 1:
            raise SystemExit("PRESIDENT_GATEWAY_MAX_STREAMS_PER_CONNECTION must be at least 1")


@dataclass(frozen=True)
class CostlySettings(FromEnv):
    """How many costly calls (log-ins, registrations, new guests, new tables) a gateway
    replica runs at once, and how many wait (:mod:`president.servicekit.fair_queue`)."""

    slots: int = setting(
        "PRESIDENT_COSTLY_SLOTS",
        2,
        "gateway: log-ins, registrations, new guests and new tables under way at once (per "
        "replica; a password's hash takes about 0.2 s of every core); not scaled",
        whole,
    )
    waiting: int = setting(
        "PRESIDENT_COSTLY_WAITING",
        64,
        "gateway: such calls waiting for a slot, in all; one more is refused SERVER_BUSY",
        whole,
    )
    waiting_per_peer: int = setting(
        "PRESIDENT_COSTLY_WAITING_PER_PEER",
        2,
        "gateway: such calls waiting per address (slots go to the addresses in turn)",
        whole,
    )

    def __post_init__(self) -> None:
        if min(self.slots, self.waiting, self.waiting_per_peer) < 1:
            raise SystemExit(
                "PRESIDENT_COSTLY_SLOTS, _WAITING and _WAITING_PER_PEER must be at least 1"
            )


@dataclass(frozen=True)
class LimitSettings(FromEnv):
    """The gateway's rate and stream limits, and the factor they are all multiplied by."""

    scale: float = setting(
        "PRESIDENT_LIMITS_SCALE",
        1.0,
        "gateway: multiplies every rate and stream limit and the costly calls' waiting "
        "(the local stacks raise them)",
        positive,
    )
    rates: RateSettings = group(RateSettings)
    streams: StreamSettings = group(StreamSettings)
    costly: CostlySettings = group(CostlySettings)


@dataclass(frozen=True)
class AudienceSettings(FromEnv):
    """How a replica serves the spectators of its tables (:mod:`.audience`)."""

    inbox: int = setting(
        "PRESIDENT_AUDIENCE_INBOX",
        256,
        "gateway: the most changes a spectator is sent in one write; one further behind "
        "skips to the view now",
        whole,
    )
    lag_seconds: float = setting(
        "PRESIDENT_AUDIENCE_LAG_MS",
        0.25,
        "gateway: how long (ms) a write may wait unread by a spectator (beyond its pace) "
        "before it skips to the view now",
        milliseconds,
        shown="250",
    )
    writes_per_second: float = setting(
        "PRESIDENT_AUDIENCE_WRITES",
        4000.0,
        "gateway: the spectators' stream writes a second the replica allows itself (a "
        "table's spectators are written at most once per their number over this); raise it "
        "on an audience replica with a core of its own",
        number,
    )
    replay: int = setting(
        "PRESIDENT_WATCH_REPLAY",
        512,
        "gateway: the most changes a resumed Watch replays; from further back it gets the "
        "view now (skipped)",
        whole,
    )


@dataclass(frozen=True)
class DoorSettings(FromEnv):
    """An audience replica's spectators' HTTP door (:mod:`.audience_http`)."""

    port: int = setting(
        "PRESIDENT_AUDIENCE_HTTP_PORT",
        -1,
        "audience replica: the port of its spectators' HTTP door (Connect Watch over "
        "HTTP/1.1); not set: no door",
        whole,
        shown="not set",
    )
    allowed_origins: tuple[str, ...] = setting(
        "PRESIDENT_AUDIENCE_ALLOWED_ORIGINS",
        (),
        "the door: the web pages (full origins, comma-separated) that may watch there",
        origins,
    )
    buffer_bytes: int = setting(
        "PRESIDENT_AUDIENCE_BUFFER_KIB",
        64 * 1024,
        "the door: the unsent KiB a spectator may have before it skips to the view now",
        kibibytes,
        shown="64",
    )


@dataclass(frozen=True)
class GatewaySettings(FromEnv):
    """Everything a gateway replica reads."""

    common: Settings = group(Settings)
    role: str = setting(
        "PRESIDENT_GATEWAY_ROLE",
        PLAYERS,
        "gateway: audience makes a replica that serves spectators only and refuses table "
        "commands (AUDIENCE_REPLICA)",
        choice(*ROLES),
    )
    operator_keys: tuple[str, ...] = setting(
        "PRESIDENT_OPERATOR_KEYS",
        (),
        "gateway: the operator's public signing keys GetOperatorKeys publishes, the current one "
        "first, then retired ones (docs/auditing.md)",
        public_keys,
        shown="hex,hex",
    )
    leases: LeaseSettings = group(LeaseSettings)
    limits: LimitSettings = group(LimitSettings)
    audience: AudienceSettings = group(AudienceSettings)
    door: DoorSettings = group(DoorSettings)
    #: The timer service's waits, shown as countdowns (between rounds, after a game).
    waits: WaitSettings = group(WaitSettings)

    def __post_init__(self) -> None:
        if self.door.port >= 0 and self.role != AUDIENCE:
            raise SystemExit(
                "PRESIDENT_AUDIENCE_HTTP_PORT opens the spectators' HTTP door of an audience "
                "replica: set PRESIDENT_GATEWAY_ROLE=audience too (the players' replicas have none)"
            )
