"""Bots play a whole game recorded: through TableHost into the event store, as a real table.

The table runs through :class:`president.hosting.host.TableHost`: every command and
its events go into the store, each round is committed, dealt and revealed by
the dealer, bots move as their own commands, and the host stands in for the
timer when the bots leave a round waiting (rapid mode). With
:func:`seeded_dealer` every secret comes from the seed, as in
:mod:`president.play.offline`, so the same seed plays the same game again.

Used by ``president play --db``, the audit tests and the audit benchmark.
"""

from __future__ import annotations

from president.hosting.dealer import LocalDealer, RoundKey
from president.hosting.host import TableHost, new_table_id
from president.play.offline import round_secret
from president.rules import game as g
from president.rules.options import Options

HOST = "host"
"""The actor of the host's commands in a local game."""

MAX_HOST_STEPS = 10_000


def seeded_dealer(seed: int) -> LocalDealer:
    """A dealer whose round secrets are those of a seeded local game."""

    def secret_for(key: RoundKey) -> bytes:
        return round_secret(seed, key.game_no, key.round_no)

    return LocalDealer(secret_for=secret_for)


def record_bot_game(
    host: TableHost,
    options: Options,
    players: int,
    *,
    rounds: int | None = None,
    table_id: str | None = None,
) -> str:
    """Create a table of ``players`` bots, play a game, return the table id.

    The game runs until it ends by the rules, or until ``rounds`` rounds are
    played, when the host ends it.
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
    play_to_end(host, table_id, rounds=rounds)
    return table_id


def play_to_end(host: TableHost, table_id: str, *, rounds: int | None = None) -> None:
    """Drive a table of bots until its game is over (next rounds, timeouts, the end)."""
    for _ in range(MAX_HOST_STEPS):
        table = host.load(table_id)
        game = table.game
        command_id = f"{table_id}/v{table.version}"
        if game.phase == g.GamePhase.ROUND and game.round is not None:
            # Nobody moves by themselves: the timer runs out.
            host.timeout(table_id, game.round.timer_key, game.game_no, game.round_no)
        elif game.phase == g.GamePhase.BETWEEN_ROUNDS:
            if rounds is not None and game.round_no >= rounds:
                host.decide_and_append(table_id, g.EndGame(), f"{command_id}/end", HOST)
            else:
                host.decide_and_append(table_id, g.NextRound(), f"{command_id}/next", HOST)
        else:
            return
    raise RuntimeError(f"table {table_id}: the game did not end")  # pragma: no cover
