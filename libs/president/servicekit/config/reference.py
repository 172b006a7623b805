"""The reference page of every setting, made from their declarations: ``docs/settings.md``.

``president settings`` prints it, ``president settings --write`` writes it;
a test checks that the committed page is what the code makes, and that every
``PRESIDENT_*`` variable the code reads is on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from president.servicekit.config import Settings
from president.servicekit.config.fields import Variable, variables
from president.servicekit.config.gateway import GatewaySettings
from president.servicekit.config.table import TableSettings
from president.servicekit.config.timer import TimerSettings
from president.servicekit.config.tools import ToolSettings
from president.servicekit.config.web import WebSettings

#: Where the page lives in the repository.
PAGE = Path("docs/settings.md")
#: The page's sections: who reads them, and their settings class.
SECTIONS: tuple[tuple[str, type[Any]], ...] = (
    ("Every service", Settings),
    ("Gateway", GatewaySettings),
    ("Table service", TableSettings),
    ("Timer", TimerSettings),
    ("Web edge", WebSettings),
    ("Tools", ToolSettings),
)

INTRODUCTION = """\
# Settings

Every service reads its settings from `PRESIDENT_*` environment variables, once,
at start; the defaults suit one machine. This page is generated from the code
(`libs/president/servicekit/config/`): run `president settings --write` after
changing a setting, and a test checks the page is current.

A variable set to an empty value counts as unset, except a text setting's.
`deploy/README.md` says what a deployment sets and why.
"""


def every_variable() -> Iterator[tuple[str, Variable]]:
    """Each variable once, under the first section that reads it."""
    seen: set[str] = set()
    for title, kind in SECTIONS:
        for variable in variables(kind):
            if variable.name not in seen:
                seen.add(variable.name)
                yield title, variable


def page() -> str:
    """The reference page's Markdown."""
    lines = [INTRODUCTION.rstrip()]
    section = ""
    for title, variable in every_variable():
        if title != section:
            section = title
            lines += ["", f"## {title}", "", "| variable | default | what |", "|---|---|---|"]
        shown = variable.shown.replace("|", "\\|")
        default = shown if shown in ("not set", "off", "its own") else f"`{shown}`"
        lines.append(f"| `{variable.name}` | {default} | {variable.meaning} |")
    return "\n".join(lines) + "\n"
