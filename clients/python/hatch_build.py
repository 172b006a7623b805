"""president-client's files: the repository's own (``libs/``, ``gen/python/``), not copies.

A wheel gets them as ``force_include``; an editable install gets none, only the
``.pth`` of ``dev-mode-dirs`` (``libs/`` and ``gen/python/``, as the server's editable
install has): a copy in site-packages would shadow the server's ``president.rules``.
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: What a client needs, each file owned by this package alone (the root
#: pyproject.toml's wheel excludes them, and depends on this package).
FILES = {
    "../../libs/president/client": "president/client",
    "../../libs/president/py.typed": "president/py.typed",
    "../../libs/president/rules/__init__.py": "president/rules/__init__.py",
    "../../libs/president/rules/cards.py": "president/rules/cards.py",
    "../../gen/python/president/gateway": "president/gateway",
    "../../gen/python/president/players": "president/players",
    "../../gen/python/president/standings": "president/standings",
    "../../gen/python/president/tournaments": "president/tournaments",
    "../../gen/python/president/events": "president/events",
    "../../gen/python/president/game": "president/game",
}


class ClientFiles(BuildHookInterface):  # type: ignore[type-arg]
    """Adds :data:`FILES` to a wheel (not to an editable install)."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version == "standard":
            build_data["force_include"].update(FILES)
