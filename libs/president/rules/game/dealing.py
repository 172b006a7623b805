"""The deal of a table's next round: the order seats receive cards, hand sizes."""

from __future__ import annotations

from collections.abc import Sequence

from president.rules.cards import DECK_WITH_JOKERS_SIZE, STANDARD_DECK_SIZE
from president.rules.game.state import GameState


def deal_order(game: GameState) -> tuple[int, ...]:
    """The seats in the order they receive cards for the next round (DEAL.md).

    ``seat_order``: from seat 0 upwards. ``bottom_first``: in round 1 seat
    order, later the lowest-placed of the last round first, and upwards.
    ``discard``: seat order; the cards that do not divide evenly are set aside.
    """
    players = game.occupied
    standings = carried_standings(game, players)
    if game.options.deal_extras == "bottom_first" and standings:
        return tuple(reversed(standings))
    return players


def hand_size(game: GameState) -> int | None:
    """The hand-size limit of the deal: only when the extras are set aside."""
    if game.options.deal_extras != "discard":
        return None
    deck = DECK_WITH_JOKERS_SIZE if game.options.jokers else STANDARD_DECK_SIZE
    return deck // len(game.occupied)


def carried_standings(game: GameState, players: Sequence[int]) -> tuple[int, ...]:
    """Last round's standings, when the same players play again (else none).

    A newcomer who sat down between rounds has no place in them: the next
    round then starts like round 1 (rulebook 000), with no exchange.
    """
    if game.newcomers & set(players):
        return ()
    if game.round_no == 0 or sorted(game.standings) != sorted(players):
        kept = tuple(seat for seat in game.standings if seat in players)
        return kept if len(kept) == len(players) and kept else ()
    return game.standings
