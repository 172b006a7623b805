"""Golden replays: whole seeded bot games and their expected logs, checked in.

Any change in behaviour (rules, bots, deal, log wording) shows here as a diff.
After a deliberate change, regenerate with ``UPDATE_GOLDEN=1 make unit``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from president.cli.main import app

GOLDEN = Path(__file__).parent / "golden"
GAMES = [
    ("classic", 4, 11, 0),
    ("club", 5, 12, 2),
    ("house", 4, 13, 2),
    ("house-rapid", 3, 14, 2),
    ("traditional", 5, 15, 2),
]


@pytest.mark.parametrize(("preset", "players", "seed", "rounds"), GAMES)
def test_seeded_game_matches_its_golden_log(
    preset: str, players: int, seed: int, rounds: int
) -> None:
    args = ["play", "--preset", preset, "--players", str(players), "--seed", str(seed)]
    if rounds:
        args += ["--rounds", str(rounds)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    path = GOLDEN / f"{preset}-{players}p-seed{seed}.log"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(result.output)
    assert result.output == path.read_text()
