"""An account's totals from its rounds: rounds, places, average place, best streak.

A streak is rounds in a row, in the order they ended over every table, that
the account finished first (as President); the best streak is the longest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Totals:
    """What an account's rounds add up to."""

    rounds: int
    places: tuple[int, ...]
    average_place: float
    best_streak: int


def totals(places: Sequence[int]) -> Totals:
    """The totals of an account's places (from 1), in the order the rounds ended."""
    histogram: list[int] = []
    streak = best = 0
    for place in places:
        histogram.extend([0] * (place - len(histogram)))
        histogram[place - 1] += 1
        streak = streak + 1 if place == 1 else 0
        best = max(best, streak)
    average = sum(places) / len(places) if places else 0.0
    return Totals(len(places), tuple(histogram), average, best)
