"""One round of President: exchange, tricks, places and points.

Commands go in, events come out: ``decide(state, command)`` checks the
command and returns the events it causes (or raises :class:`Rejected`, and
nothing changes); ``evolve(state, event)`` folds one event into the state and
holds no rules of its own. ``step`` does both. The state is an immutable
named tuple; hands are bitmasks (see :mod:`president.rules.cards`).

This is the public surface; the modules of the package each hold one job:
``commands`` and ``events`` (the named tuples), ``state`` (the state, its
phases and field indexes), ``start`` (dealing in a round), ``plays`` (plays,
passes and the turn), ``exchange`` (returns), ``timeouts`` and ``defaults``
(what the server does when the timer runs out), ``legal`` (legal actions),
``scoring`` (places and points), ``evolution`` and ``decisions`` (the tables of
handlers by command and event type).
"""

from president.rules.round.commands import Command, Pass, PlayCards, ReturnCards, Timeout
from president.rules.round.decisions import decide, step
from president.rules.round.events import (
    CardsGiven,
    CardsPlayed,
    Event,
    Passed,
    PlayerWentOut,
    PlayStarted,
    RevolutionChanged,
    RoundEnded,
    RoundStarted,
    TimedOut,
    TrickClosed,
)
from president.rules.round.evolution import evolve, initial_state, replay
from president.rules.round.legal import Action, legal_actions
from president.rules.round.plays import check_play
from president.rules.round.scoring import game_end, place_points, role_key, round_result
from president.rules.round.start import start_round
from president.rules.round.state import NOBODY, Pending, RoundPhase, RoundState

__all__ = [
    "NOBODY",
    "Action",
    "CardsGiven",
    "CardsPlayed",
    "Command",
    "Event",
    "Pass",
    "Passed",
    "Pending",
    "PlayCards",
    "PlayStarted",
    "PlayerWentOut",
    "ReturnCards",
    "RevolutionChanged",
    "RoundEnded",
    "RoundPhase",
    "RoundStarted",
    "RoundState",
    "TimedOut",
    "Timeout",
    "TrickClosed",
    "check_play",
    "decide",
    "evolve",
    "game_end",
    "initial_state",
    "legal_actions",
    "place_points",
    "replay",
    "role_key",
    "round_result",
    "start_round",
    "step",
]
