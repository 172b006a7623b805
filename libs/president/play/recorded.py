"""Bots play a whole game recorded: through TableHost into the event store, as a real table.

The table runs through :class:`president.hosting.host.TableHost`: every command and
its events go into the store, each round is committed, dealt and revealed by
the dealer, bots move as their own commands, and the host stands in for the
timer when the bots leave a round waiting (rapid mode). With
:func:`seeded_dealer` every secret comes from the seed, as in
:mod:`president.play.offline`, so the same seed plays the same game again;
with :func:`seeded_host` the game also runs on a :class:`GameClock`, whose
time passes only when the table waits for its timer: each timeout is stamped
at its deadline, as the timer service would send it, and the audit's time
checks hold.

Used by ``president play --db``, the audit tests and the audit benchmark.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from president.hosting.blinding import seeded_blinding
from president.hosting.deadlines import running_timer
from president.hosting.dealer import LocalDealer, RoundKey
from president.hosting.host import TableHost, new_table_id
from president.hosting.projection import Table
from president.play.offline import round_secret
from president.rules import game as g
from president.rules.options import Options
from president.store import EventStore

HOST = "host"
"""The actor of the host's commands in a local game."""

MAX_HOST_STEPS = 10_000
GAME_START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
"""When a recorded game's clock starts."""


class GameClock:
    """A recorded game's simulated time: it stands still until the table waits for its timer."""

    def __init__(self, start: datetime = GAME_START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass."""
        self.now += timedelta(seconds=seconds)


def seeded_dealer(seed: int) -> LocalDealer:
    """A dealer whose round secrets are those of a seeded local game."""

    def secret_for(key: RoundKey) -> bytes:
        return round_secret(seed, key.game_no, key.round_no)

    return LocalDealer(secret_for=secret_for)


def seeded_host(store: EventStore, seed: int) -> tuple[TableHost, GameClock]:
    """A table host with :func:`seeded_dealer` on a fresh :class:`GameClock`, and the clock;
    its blinding values follow from the seed too (a seeded game hides nothing)."""
    clock = GameClock()
    host = TableHost(store, seeded_dealer(seed), clock=clock, blinding=seeded_blinding(seed))
    return host, clock


def record_bot_game(
    host: TableHost,
    options: Options,
    players: int,
    *,
    rounds: int | None = None,
    table_id: str | None = None,
    clock: GameClock | None = None,
) -> str:
    """Create a table of ``players`` bots, play a game, return the table id.

    The game runs until it ends by the rules, or until ``rounds`` rounds are
    played, when the host ends it. With the host's ``clock``, each timeout
    waits for its deadline.
    """
    table_id = table_id or new_table_id()
    host.create(table_id, options, seat_count=players, host_player_id=HOST)
    for seat in range(players):
        host.decide_and_append(
            table_id,
            g.SitDown(seat, f"Bot {seat + 1}", is_bot=True),
            f"{table_id}/sit-{seat}",
            HOST,
        )
    host.decide_and_append(table_id, g.StartGame(), f"{table_id}/start", HOST)
    play_to_end(host, table_id, rounds=rounds, clock=clock)
    return table_id


def play_to_end(
    host: TableHost, table_id: str, *, rounds: int | None = None, clock: GameClock | None = None
) -> None:
    """Drive a table of bots until its game is over (next rounds, timeouts, the end)."""
    for _ in range(MAX_HOST_STEPS):
        table = host.load(table_id)
        game = table.game
        command_id = f"{table_id}/v{table.version}"
        if game.phase == g.GamePhase.ROUND and game.round is not None:
            # Nobody moves by themselves: the timer runs out.
            wait_for_timer(table, clock)
            host.timeout(table_id, game.round.timer_key, game.game_no, game.round_no)
        elif game.phase == g.GamePhase.BETWEEN_ROUNDS:
            if rounds is not None and game.round_no >= rounds:
                host.decide_and_append(table_id, g.EndGame(), f"{command_id}/end", HOST)
            else:
                host.decide_and_append(table_id, g.NextRound(), f"{command_id}/next", HOST)
        else:
            return
    raise RuntimeError(f"table {table_id}: the game did not end")  # pragma: no cover


def wait_for_timer(table: Table, clock: GameClock | None) -> None:
    """Let the time of the table's running timer pass on ``clock`` (None: no simulated time)."""
    timer = running_timer(table)
    if clock is not None and timer is not None:
        clock.wait(timer.seconds)
