"""The settings of the tools beside the services: the store's migrations (alembic) and the
ports the launcher hands out."""

from __future__ import annotations

from dataclasses import dataclass

from president.servicekit.config.fields import FromEnv, setting


@dataclass(frozen=True)
class ToolSettings(FromEnv):
    """What ``alembic`` and the launcher (``president run``, the tests' stacks) read."""

    store_url: str = setting(
        "PRESIDENT_STORE_URL",
        "",
        "alembic run by hand: the store to migrate (or -x url=...); the services migrate "
        "their own at start",
    )
    port_range: str = setting(
        "PRESIDENT_PORT_RANGE",
        "",
        "the launcher: FIRST-LAST, the ports it hands out (the test suite sets one); not "
        "set: the kernel picks",
    )
