"""The table service's settings: its calls to the dealer, its leases, its memory and the
tables that leave."""

from __future__ import annotations

from dataclasses import dataclass

from president.servicekit.config import LeaseSettings, Settings
from president.servicekit.config.fields import FromEnv, group, seconds, setting

#: The sweep runs at least this often, and at most twice a second.
LONGEST_SWEEP, SHORTEST_SWEEP = 60.0, 0.5


@dataclass(frozen=True)
class EvictionRules(FromEnv):
    """How long a finished table, and a table where nothing happens, stays."""

    finished_seconds: float = setting(
        "PRESIDENT_FINISHED_TABLE_SECONDS",
        3_600.0,
        "table: a closed table leaves the lobby and memory this long after it closed",
        seconds,
    )
    abandoned_seconds: float = setting(
        "PRESIDENT_ABANDONED_TABLE_SECONDS",
        86_400.0,
        "table: a table where nothing happened this long is abandoned: it leaves the lobby "
        "and memory too",
        seconds,
    )

    @property
    def sweep_seconds(self) -> float:
        """How often a replica sweeps: a quarter of the shorter time, within bounds."""
        shorter = min(self.finished_seconds, self.abandoned_seconds)
        return min(LONGEST_SWEEP, max(SHORTEST_SWEEP, shorter / 4))


@dataclass(frozen=True)
class TableSettings(FromEnv):
    """Everything a table service replica reads."""

    common: Settings = group(Settings)
    dealer_call_seconds: float = setting(
        "PRESIDENT_DEALER_CALL_SECONDS", 3.0, "table: a call to the dealer's timeout", seconds
    )
    advertise: str = setting(
        "PRESIDENT_TABLE_ADVERTISE",
        "",
        "table: the address other replicas forward a table's commands to (with leases)",
        shown="host:port",
    )
    idle_seconds: float = setting(
        "PRESIDENT_TABLE_IDLE_SECONDS",
        600.0,
        "table: a table no command touched this long leaves memory (the store keeps it; the "
        "next command loads it)",
        seconds,
    )
    directory_seconds: float = setting(
        "PRESIDENT_TABLE_DIRECTORY_SECONDS",
        0.25,
        "table: how often the table list folds the store's new events in the background (its "
        "own changes are listed at once, other replicas' within this); 0: on every ListTables",
        seconds,
    )
    signing_key_file: str = setting(
        "PRESIDENT_SIGNING_KEY_FILE",
        "",
        "table: the operator's Ed25519 signing key (PEM, PKCS #8; president operator-key makes "
        "one) that signs every receipt and commitment feed head; empty: nothing is signed "
        "(docs/operations.md)",
        shown="path",
    )
    leases: LeaseSettings = group(LeaseSettings)
    eviction: EvictionRules = group(EvictionRules)
