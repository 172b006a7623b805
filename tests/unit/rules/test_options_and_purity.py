"""Options are validated; the engine is pure."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import president.rules
from president.rules.options import PRESETS, OptionError, check_player_count, options_for

RULES_DIR = Path(president.rules.__file__).parent


@pytest.mark.parametrize(
    ("preset", "overrides", "message"),
    [
        ("poker", {}, "unknown preset 'poker'"),
        ("club", {"bombs": True}, "unknown option 'bombs'"),
        ("club", {"pass_rule": "lockout"}, "pass_rule is one of reenter, sit_out"),
        ("club", {"revolution": "maybe"}, "revolution is true or false"),
        ("club", {"game_end": "rounds:0"}, "game_end is target:N"),
        ("club", {"exchange": [5]}, "exchange lists at most 3 counts"),
        ("club", {"first_lead": "1Z"}, "is not a card"),
        ("club", {"turn_seconds": 0}, "turn_seconds is a number of seconds"),
        ("club", {"players": "9"}, "players is a range"),
    ],
)
def test_bad_options_are_refused_with_a_sentence(preset, overrides, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(OptionError, match=message):
        options_for(preset, overrides)


def test_player_counts_per_preset() -> None:
    ranges = {
        "classic": (3, 7),
        "club": (4, 7),
        "house": (3, 6),
        "house-rapid": (3, 6),
        "traditional": (3, 8),
    }
    for preset in PRESETS:
        options = options_for(preset)
        low, high = ranges[preset]
        check_player_count(options, low)
        check_player_count(options, high)
        for bad in (low - 1, high + 1):
            with pytest.raises(OptionError, match=f"played by {low} to {high} players"):
                check_player_count(options, bad)


def test_presets_match_rules_md() -> None:
    house = options_for("house")
    assert (
        house.revolution,
        house.skip_on_match,
        house.four_closes,
        house.strongest_closes,
        house.finish_with_two,
        house.equal_rank,
        house.pass_rule,
    ) == (True, "same_or_nothing", True, True, True, True, "sit_out")
    rapid = options_for("house-rapid")
    assert rapid.rapid and rapid.skip_rule == "off" and rapid.rapid_seconds == 10
    classic = options_for("classic")
    assert (
        classic.later_lead,
        classic.first_lead_must_include,
        classic.scoring,
        classic.game_end,
    ) == ("president", True, "classic", "target:11")
    club = options_for("club")
    assert (club.later_lead, club.scoring, club.game_end, club.exchange) == (
        "bottom",
        "below",
        "rounds:7",
        (2, 1),
    )
    traditional = options_for("traditional")
    assert (traditional.count_rule, traditional.deal_extras) == ("more_beats_fewer", "discard")
    assert options_for("traditional", {"must_match_type": True}).count_rule == "exact"


def test_options_round_trip_through_their_names() -> None:
    for preset in PRESETS:
        options = options_for(preset, {"revolution": True})
        values = options.to_dict()
        values.pop("preset")
        assert options_for(preset, values) == options


FORBIDDEN = {
    "grpc",
    "nats",
    "sqlalchemy",
    "prometheus_client",
    "alembic",
    "psycopg",
    "random",
    "secrets",
    "time",
    "datetime",
    "os",
    "socket",
    "asyncio",
    "threading",
}


def test_the_rules_package_imports_no_io_clock_or_randomness() -> None:
    for path in RULES_DIR.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top not in FORBIDDEN, f"{path.name} imports {name}"
                assert top in {
                    "president",
                    "__future__",
                    "collections",
                    "dataclasses",
                    "enum",
                    "typing",
                    "json",
                    "re",
                    "functools",
                }, f"{path.name} imports {name}"
                if top == "president":
                    assert name.startswith("president.rules"), f"{path.name} imports {name}"


def test_the_round_does_not_import_the_bots() -> None:
    """The server's default moves live in the round (round/defaults.py): no cycle."""
    for path in (RULES_DIR / "round").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            else:
                continue
            assert "president.rules.bots" not in imported, f"{path.name} imports the bots"


def test_importing_the_engine_loads_no_service_library() -> None:
    code = (
        "import sys, president.rules.game, president.rules.scenario, president.rules.roles;"
        "print(','.join(sorted(m for m in sys.modules)))"
    )
    loaded = set(
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
        .stdout.strip()
        .split(",")
    )
    for library in ("grpc", "nats", "sqlalchemy", "prometheus_client", "alembic"):
        assert library not in loaded
