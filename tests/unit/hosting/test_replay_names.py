"""`president audit replay` names players by their display names, never by their account ids."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from president.cli.main import app
from president.hosting.dealer import LocalDealer
from president.hosting.host import TableHost
from president.rules import game as g
from president.rules.options import options_for
from president.store import EventStore


def test_replay_names_players_by_display_name(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with EventStore.from_url(url, migrate=True) as store:
        host = TableHost(store, LocalDealer())
        host.create(
            "t1",
            options_for("classic", {"game_end": "rounds:1"}),
            seat_count=4,
            host_player_id="p-ann-7f3a",
        )
        host.decide_and_append(
            "t1", g.SitDown(0, "p-ann-7f3a", display_name="Ann"), "s0", "p-ann-7f3a"
        )
        host.decide_and_append(
            "t1", g.SitDown(1, "p-bob-91c2", display_name="Bob"), "s1", "p-bob-91c2"
        )
        for seat in (2, 3):
            host.decide_and_append(
                "t1", g.SitDown(seat, f"b{seat}", True, f"Bot {seat}"), f"s{seat}", "p-ann-7f3a"
            )
        host.decide_and_append("t1", g.StartGame(), "start", "p-ann-7f3a")
        host.decide_and_append("t1", g.Leave(1), "bob-leaves", "p-bob-91c2")
    result = CliRunner().invoke(app, ["audit", "replay", "--db", url, "--table", "t1"])
    assert result.exit_code == 0, result.output
    assert "Ann sits at seat 0." in result.output
    assert "Bob left; a bot finishes the round for them." in result.output
    assert "p-ann-7f3a" not in result.output and "p-bob-91c2" not in result.output
