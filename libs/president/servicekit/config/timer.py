"""The timer's settings: how long a table waits for its host or its people, and its memory.

The waits (:class:`WaitSettings`) are read by the gateway too: it shows them as countdowns.
"""

from __future__ import annotations

from dataclasses import dataclass

from president.hosting.deadlines import IdleRules
from president.servicekit.config import Settings
from president.servicekit.config.fields import FromEnv, group, seconds, setting


@dataclass(frozen=True)
class WaitSettings(FromEnv):
    """How long a table waits for people before the timer moves it on (the gateway reads
    them too, for the countdown it shows meanwhile)."""

    host_idle_seconds: float = setting(
        "PRESIDENT_HOST_IDLE_SECONDS",
        120.0,
        "timer and gateway: between rounds and after a game, how long the host has before "
        "the table moves on by itself (the gateway shows the countdown)",
        seconds,
    )
    empty_table_seconds: float = setting(
        "PRESIDENT_EMPTY_TABLE_SECONDS",
        60.0,
        "timer and gateway: how long a table every person left stays open before it closes",
        seconds,
    )
    host_away_seconds: float = setting(
        "PRESIDENT_HOST_AWAY_SECONDS",
        60.0,
        "timer and gateway: how long a host no gateway reports connected keeps the role "
        "while another person at the table is connected (in the lobby, between rounds, after "
        "a game); then it passes to the next connected person (the gateway shows the "
        "countdown). 0: only when the host leaves",
        seconds,
    )

    def rules(self) -> IdleRules:
        """The waits as the deadlines' rules (whole seconds)."""
        return IdleRules(
            host_idle_seconds=round(self.host_idle_seconds),
            empty_seconds=round(self.empty_table_seconds),
            host_away_seconds=round(self.host_away_seconds),
        )


@dataclass(frozen=True)
class TimerSettings(FromEnv):
    """Everything a timer replica reads."""

    common: Settings = group(Settings)
    waits: WaitSettings = group(WaitSettings)
    idle_seconds: float = setting(
        "PRESIDENT_TIMER_IDLE_SECONDS",
        600.0,
        "timer: a table with no deadline and no event this long leaves memory (its next "
        "event reads its history)",
        seconds,
    )
