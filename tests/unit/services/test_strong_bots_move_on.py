"""In rapid play a strong bot moves when the timer says its delay ran out (``MoveOn``): its
random search may choose another move when the table decides again under its lock, and the
move still stands (the table did not move on), recorded as the level's account."""

from __future__ import annotations

from pathlib import Path

from president.hosting.dealer import LocalDealer
from president.hosting.host import TableHost
from president.hosting.move_on import BOTS, move_on
from president.hosting.streams import stream_id
from president.rules import game as g
from president.rules.errors import Rejected
from president.rules.options import options_for
from president.store import EventStore
from tests.support.table_host import fixed_secret


def test_strong_bots_move_on_their_timer_as_their_level(tmp_path: Path) -> None:
    with EventStore.from_url(f"sqlite:///{tmp_path / 'store.db'}", migrate=True) as store:
        host = TableHost(store, LocalDealer(secret_for=fixed_secret), rapid_bots_wait=True)
        table_id = "rapid"
        options = options_for("house-rapid", {"game_end": "rounds:1"})
        host.create(table_id, options, seat_count=4, host_player_id="p0")
        host.decide_and_append(table_id, g.SitDown(0, "p0"), "sit-0", "p0")
        for seat in (1, 2, 3):
            bot = g.SitDown(seat, f"bot:strong:{seat}", True)
            host.decide_and_append(table_id, bot, f"sit-{seat}", "p0")
        host.decide_and_append(table_id, g.StartGame(), "start", "p0")
        before = store.current_version(stream_id(table_id))
        moves = 0
        for step in range(6):  # the human waits: each bot move is the timer's (a fixed deal)
            table = host.load(table_id)
            try:
                move_on(table, BOTS, 1, 1, table.version)
            except Rejected:
                break  # no bot has a move now (a strong bot may wait): the human's turn
            # The table decides again under its lock: the move stands, never STALE.
            host.move_on(table_id, BOTS, 1, 1, f"bots-{step}", timer_key=table.version)
            moves += 1
        moved = store.read_stream(stream_id(table_id))[before:]
        assert len({event.metadata["command_id"] for event in moved}) == moves
        assert {event.metadata["actor"] for event in moved} <= {"bot:strong", "server"}
        assert moves >= 1, "on this fixed deal a strong bot has a move after the start"
        assert "bot:strong" in {event.metadata["actor"] for event in moved}
