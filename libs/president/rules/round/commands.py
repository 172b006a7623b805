"""The commands of a round: what a seat (or the timer) asks the rules to do."""

from __future__ import annotations

from typing import NamedTuple


class PlayCards(NamedTuple):
    """``seat`` plays ``cards`` (a mask); ``version`` is the trick version it answers."""

    seat: int
    cards: int
    version: int | None = None


class Pass(NamedTuple):
    """``seat`` passes."""

    seat: int
    version: int | None = None


class ReturnCards(NamedTuple):
    """``seat`` returns ``cards`` in the exchange."""

    seat: int
    cards: int


class Timeout(NamedTuple):
    """The running timer expired; ``expected`` is the timer key it was started on."""

    expected: int | None = None


Command = PlayCards | Pass | ReturnCards | Timeout
