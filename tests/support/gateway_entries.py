"""A table played in-process (a human in seat 0, bots elsewhere) and its events as the
gateway's entries: what the gateway's wire tests build changes from."""

from __future__ import annotations

from pathlib import Path

from president.hosting.deadlines import IdleRules
from president.hosting.dealer import LocalDealer
from president.hosting.host import TableHost
from president.hosting.streams import stream_id
from president.rules import bots
from president.rules import game as g
from president.rules.options import options_for
from president.servicekit.nats import envelope
from president.services.gateway.streams.entries import Entry, apply, with_clock
from president.store import EventStore


def _seated(
    tmp_path: Path, preset: str, overrides: dict[str, str] | None = None
) -> tuple[EventStore, TableHost]:
    store = EventStore.from_url(f"sqlite:///{tmp_path / 'events.db'}", migrate=True)
    host = TableHost(store, LocalDealer())
    host.create("w1", options_for(preset, overrides), seat_count=4, host_player_id="p0")
    host.decide_and_append("w1", g.SitDown(0, "p0", False, "Ada"), "sit-0", "p0")
    for seat in range(1, 4):
        host.decide_and_append("w1", g.SitDown(seat, f"bot-{seat}", True), f"sit-{seat}", "p0")
    host.decide_and_append("w1", g.StartGame(), "start", "p0")
    return store, host


def _entries(store: EventStore, idle: IdleRules | None = None) -> list[Entry]:
    entries: list[Entry] = []
    for stored in store.read_stream(stream_id("w1"), 1):
        previous = entries[-1] if entries else None
        entry = apply(previous.table if previous else None, envelope(stored))
        entries.append(with_clock(entry, previous, idle))
    return entries


def played_entries(tmp_path: Path, moves: int = 12) -> list[Entry]:
    """The entries of a four-seat table (a human in seat 0, bots elsewhere) after a few plays."""
    store, host = _seated(tmp_path, "house")
    for step in range(moves):
        table = host.load("w1")
        state = table.game.round
        if state is None or table.game.phase != g.GamePhase.ROUND:
            break
        command = bots.choose_action(state, 0)
        if command is None:
            break
        host.decide_and_append("w1", command, f"move-{step}", "p0")
    return _entries(store)


def game_entries(
    tmp_path: Path, preset: str = "classic", rounds: int = 2, idle: IdleRules | None = None
) -> list[Entry]:
    """The entries of a whole game of ``rounds`` rounds at such a table (the exchange
    included from the second round on), the human's moves chosen as a bot's; their clocks
    follow the timer service's waits ``idle`` when given."""
    store, host = _seated(tmp_path, preset, {"game_end": f"rounds:{rounds}"})
    for step in range(2000):
        table = host.load("w1")
        phase, state = table.game.phase, table.game.round
        if phase == g.GamePhase.GAME_OVER:
            return _entries(store, idle)
        command: object = None
        if phase == g.GamePhase.BETWEEN_ROUNDS:
            command = g.NextRound()
        elif state is not None and phase == g.GamePhase.ROUND:
            command = bots.choose_action(state, 0)
        if command is None:
            raise AssertionError(f"the game stalled at version {table.version} ({phase})")
        host.decide_and_append("w1", command, f"move-{step}", "p0")  # type: ignore[arg-type]
    raise AssertionError("the game did not end in 2000 moves")
