"""The settings of the tools beside the services: the ports the launcher hands out."""

from __future__ import annotations

from dataclasses import dataclass

from president.servicekit.config.fields import FromEnv, setting


@dataclass(frozen=True)
class ToolSettings(FromEnv):
    """What the launcher (``president run``, the tests' stacks) reads."""

    port_range: str = setting(
        "PRESIDENT_PORT_RANGE",
        "",
        "the launcher: FIRST-LAST, the ports it hands out (the test suite sets one); not "
        "set: the kernel picks",
    )
