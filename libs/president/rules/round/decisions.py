"""``decide`` and ``step``: each command type to its handler, and the events folded in.

``DECIDE`` maps a command's type to the function that decides it; each
handler takes the state and the command and returns the events, or raises
:class:`Rejected` (and nothing changes). The round's own callers (legal
actions, timeouts) pass a command's fields as a plain tuple: building a
named tuple costs more than the check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from president.rules.round.commands import Command, Pass, PlayCards, ReturnCards, Timeout
from president.rules.round.events import Event
from president.rules.round.evolution import EVOLVE
from president.rules.round.exchange import decide_return
from president.rules.round.fast_step import step_pass, step_play
from president.rules.round.plays import decide_pass, decide_play
from president.rules.round.state import RoundState
from president.rules.round.timeouts import decide_timeout

#: The handler of each command type.
DECIDE: dict[type, Callable[[RoundState, Any], list[Event]]] = {
    PlayCards: decide_play,
    Pass: decide_pass,
    ReturnCards: decide_return,
    Timeout: decide_timeout,
}

#: Speed trick (:mod:`president.rules.round.fast_step`): a plain trick's play or pass
#: decided and folded at once; None sends the command down the general path.
FAST_STEP: dict[type, Callable[[RoundState, Any], tuple[RoundState, list[Event]] | None]] = {
    PlayCards: step_play,
    Pass: step_pass,
}


def decide(state: RoundState, command: Command) -> list[Event]:
    """The events ``command`` causes, or :class:`Rejected` (nothing changes)."""
    try:
        handler = DECIDE[type(command)]
    except KeyError:
        raise TypeError(f"not a round command: {command!r}") from None
    return handler(state, command)


def step(state: RoundState, command: Command) -> tuple[RoundState, list[Event]]:
    """``decide`` then ``evolve``: the new state and the events."""
    if state.options.plain_tricks:  # other rules pay one attribute for the fast step
        fast = FAST_STEP.get(type(command))
        if fast is not None:
            stepped = fast(state, command)
            if stepped is not None:
                return stepped
    try:  # decide(state, command), its table read here: one call less per move
        handler = DECIDE[type(command)]
    except KeyError:
        raise TypeError(f"not a round command: {command!r}") from None
    events = handler(state, command)
    for event in events:
        state = EVOLVE[type(event)](state, event)
    return state, events
