"""Ranks with ties: equal values share a rank, and the next rank skips past them (1, 2, 2, 4)."""

from __future__ import annotations

from collections.abc import Sequence


def page_ranks(values: Sequence[float], above_first: int, first_position: int) -> list[int]:
    """The ranks of a page of values sorted best first.

    ``above_first`` is how many values on the whole board beat the page's
    first value; ``first_position`` is the first value's position on the
    board, from 0. A value equal to the one before it shares its rank; any
    other value's rank is its position plus one.
    """
    ranks: list[int] = []
    for index, value in enumerate(values):
        if index == 0:
            ranks.append(above_first + 1)
        elif value == values[index - 1]:
            ranks.append(ranks[-1])
        else:
            ranks.append(first_position + index + 1)
    return ranks
