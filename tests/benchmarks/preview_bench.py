"""PreviewPlay speed, on one core: µs per call for every selection of a hand; asserts nothing.

A client calls PreviewPlay on every tap, so its cost is what matters: the
pure preview (:func:`president.rules.button.preview_play`, the engine's
``decide`` with nothing committed) and the gateway's answer built around it
(:func:`president.services.gateway.calls.preview.preview_response`, protobuf
included), each for playable and refused selections, per preset.

Run: ``make bench`` or ``.venv/bin/python tests/benchmarks/preview_bench.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import platform
import time
from collections.abc import Callable

from president.deal import deal
from president.hosting.projection import Table
from president.rules import game as g
from president.rules.button import preview_play
from president.rules.cards import cards_of, names, to_mask
from president.rules.options import options_for
from president.services.gateway.calls.preview import preview_response

PRESETS = ("classic", "club", "house", "house-rapid", "traditional")
PLAYERS = 4


def _game(preset: str) -> g.GameState:
    """A four-player table of ``preset`` in its first round's play."""
    options = options_for(preset)
    game = g.new_table(options, PLAYERS)
    for seat in range(PLAYERS):
        game = g.evolve_all(game, g.decide(game, g.SitDown(seat, f"p{seat}")))
    game = g.evolve_all(game, g.decide(game, g.StartGame()))
    secret = hashlib.sha256(f"preview/{preset}".encode()).digest()
    size = 52 // PLAYERS if options.deal_extras == "discard" else None
    hands = tuple(to_mask(h) for h in deal(secret, range(PLAYERS), hand_size=size).hands)
    return g.evolve_all(game, g.decide(game, g.DealRound(hands)))


def _selections(game: g.GameState, seat: int) -> list[list[int]]:
    """Every single of the deck and every one-rank set the seat holds."""
    state = game.round
    assert state is not None
    hand = state.hands[seat]
    out = [[card] for card in range(52)]
    for rank in range(13):
        held = cards_of(hand & (0xF << (4 * rank)))
        out += [held[:count] for count in range(2, len(held) + 1)]
    return out


def _per_call_us(run: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        run()
    return (time.perf_counter() - start) / calls * 1e6


def _row(preset: str, repeat: int) -> str:
    game = _game(preset)
    state = game.round
    assert state is not None
    seat = state.to_act if state.to_act >= 0 else 0
    table = Table("bench", game, 10)
    selections = _selections(game, seat)
    texts = [names(to_mask(cards)) for cards in selections]
    playable = sum(preview_play(game, seat, cards).playable for cards in selections)
    calls = len(selections) * repeat
    chosen = itertools.cycle(selections)
    rules_us = _per_call_us(lambda: preview_play(game, seat, next(chosen)), calls)
    written = itertools.cycle(texts)
    gateway_us = _per_call_us(lambda: preview_response(table, seat, next(written)), calls)
    return f"{preset:<12} {len(selections):>10} {playable:>9} {rules_us:>9.1f} {gateway_us:>11.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="passes over the selections")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {PLAYERS} players, µs per call")
    print(f"{'preset':<12} {'selections':>10} {'playable':>9} {'rules µs':>9} {'gateway µs':>11}")
    for preset in PRESETS:
        print(_row(preset, args.repeat))


if __name__ == "__main__":
    main()
