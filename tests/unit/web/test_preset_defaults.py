"""The lobby's option controls start at each preset's own values: the ones the server uses.

``web/src/rules.ts`` carries, per preset, the values of the options the create form
offers as controls (how the game ends, seconds per turn, jokers, revolutions); the
form sends only what the player changed from them. Here they are read off the source
and compared with :func:`president.rules.options.options_for`, so a preset changed on
the server and not in the page fails.
"""

from __future__ import annotations

import re
from pathlib import Path

from president.rules.options import PRESETS, options_for

RULES_TS = Path(__file__).resolve().parents[3] / "web" / "src" / "rules.ts"
PRESET_BLOCK = re.compile(r'^  "?([a-z-]+)"?: \{\n(?:    .*\n)*?    defaults: \{ (.*) \},$', re.M)
FIELD = re.compile(r'(\w+): ("[^"]*"|\w+)')


def page_defaults() -> dict[str, dict[str, str]]:
    text = RULES_TS.read_text(encoding="utf-8")
    return {
        preset: {name: value.strip('"') for name, value in FIELD.findall(fields)}
        for preset, fields in PRESET_BLOCK.findall(text)
    }


def test_every_preset_has_its_servers_values_in_the_page() -> None:
    found = page_defaults()
    assert sorted(found) == sorted(PRESETS)
    for preset, shown in found.items():
        options = options_for(preset)
        assert shown == {
            "gameEnd": options.game_end,
            "turnSeconds": str(options.turn_seconds),
            "jokers": str(options.jokers).lower(),
            "revolution": str(options.revolution).lower(),
        }, preset
