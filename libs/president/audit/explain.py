"""The audit's sentences: a command, an event, cards, and how a stored event differs from
the one the rules give, in words a person reads in the report.
"""

from __future__ import annotations

from typing import Any, get_args

from president.audit.commands import Command
from president.hosting.events import SERVICE_EVENT_TYPES, TableEvent
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import names
from president.rules.render import event_to_dict, event_to_text


def card_words(mask: int) -> str:
    """The cards of ``mask`` by name, or ``no cards``."""
    return " ".join(names(mask)) or "no cards"


def command_words(command: Command) -> str:
    """The command in words, for 'the rules refuse this ...'."""
    if isinstance(command, rnd.PlayCards):
        return f"play of {card_words(command.cards)} by seat {command.seat}"
    if isinstance(command, rnd.Pass):
        return f"pass by seat {command.seat}"
    if isinstance(command, rnd.ReturnCards):
        return f"return of {card_words(command.cards)} by seat {command.seat}"
    if isinstance(command, g.SitDown):
        return f"sitting down of {command.player!r} at seat {command.seat}"
    if isinstance(command, g.Leave):
        return f"leaving of seat {command.seat}"
    return _COMMAND_NAMES.get(type(command), "return to the lobby")


def event_words(event: TableEvent) -> str:
    """The event's type name, with the sentence a player reads of it in brackets."""
    if isinstance(event, SERVICE_EVENT_TYPES):
        return type(event).__name__
    text = (
        event_to_text(event)  # type: ignore[arg-type]
        if type(event) in _ROUND_EVENT_TYPES
        else g.describe_game_event(event, [])
    )
    name = type(event).__name__
    return f"{name} ({text.rstrip('.')})" if text else name


def difference(stored: TableEvent, expected: TableEvent) -> str:
    """How a stored event differs from the one the rules give, in words."""
    if type(stored) is not type(expected):
        return f"the log has {event_words(stored)} here, but the rules give {event_words(expected)}"
    if (
        isinstance(stored, rnd.CardsGiven)
        and isinstance(expected, rnd.CardsGiven)
        and stored.automatic
        and expected.automatic
        and stored.cards != expected.cards
    ):
        return (
            f"seat {expected.giver} must give their strongest cards, "
            f"{card_words(expected.cards)}, but the log gives {card_words(stored.cards)}"
        )
    mine, theirs = _fields(stored), _fields(expected)
    parts = []
    for name, value in mine.items():
        other = theirs.get(name)
        if value == other:
            continue
        words = _FIELD_WORDS.get(name, name.replace("_", " "))
        if (
            name in _PER_SEAT
            and isinstance(value, list)
            and isinstance(other, list)
            and len(value) == len(other)
        ):
            seats = [
                f"seat {seat} has {a} in the log, {b} by the rules"
                for seat, (a, b) in enumerate(zip(value, other, strict=True))
                if a != b
            ]
            parts.append(f"{words} differ: " + "; ".join(seats))
        elif name == "options":
            changed = sorted(k for k in value if value.get(k) != (other or {}).get(k))
            parts.append(f"{words} differ ({', '.join(changed)})")
        else:
            verb = "are" if name in _PLURAL else "is"
            parts.append(
                f"{words} {verb} {_value_words(name, value)} in the log, "
                f"but the rules give {_value_words(name, other)}"
            )
    return "; ".join(parts) if parts else "it differs from what the rules give"


def missing_words(extra: TableEvent, command: Command, game: g.GameState) -> str:
    """Why the rules end ``command`` before the stored ``extra`` event: what the log lacks.

    In rapid mode a trick closes once every seat with cards but its last
    player passed: a stored close after a pass while some seat has not
    passed means that seat's pass is missing from the log. Empty when there
    is nothing more to say.
    """
    state = game.round
    if not isinstance(command, rnd.Pass) or state is None or not state.options.rapid:
        return ""
    if not isinstance(extra, rnd.TrickClosed):
        return ""
    waiting = [
        seat
        for seat, hand in enumerate(state.hands)
        if hand and seat not in (command.seat, state.top_seat) and not state.sat_out >> seat & 1
    ]
    if not waiting:
        return ""
    seats = " and ".join(f"seat {seat}" for seat in waiting)
    return (
        f"; the trick closes only once every seat but its last player passed, and {seats} "
        f"did not: a pass by {seats} is missing from the log before this event"
    )


def _fields(event: TableEvent) -> dict[str, Any]:
    """An engine event's fields by name, round events as JSON-ready values; none of the table
    service's own events."""
    if isinstance(event, SERVICE_EVENT_TYPES):
        return {}
    if type(event) in _ROUND_EVENT_TYPES:
        return event_to_dict(event)  # type: ignore[arg-type]
    return dict(event._asdict())


def _value_words(name: str, value: Any) -> str:
    """One field's value in words."""
    if value is None:
        return "nobody"
    if isinstance(value, list) and name in ("cards", "set_aside", "must_include"):
        return " ".join(value) or "no cards"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return str(value)


_COMMAND_NAMES: dict[type, str] = {
    rnd.Timeout: "timeout",
    g.DealRound: "deal",
    g.StartGame: "start of a game",
    g.PlayAgain: "new game (play again)",
    g.NextRound: "next round",
    g.EndGame: "end of the game",
    g.BackToLobby: "return to the lobby",
}
"""The commands without fields that change their words, in words."""

_ROUND_EVENT_TYPES = frozenset(get_args(rnd.Event))
"""The round's events, which :mod:`president.rules.render` puts in words and dicts."""

_FIELD_WORDS = {
    "cards": "the cards",
    "seat": "the seat",
    "next_to_act": "the next seat to act",
    "trick_version": "the trick version",
    "skipped": "the skipped seats",
    "same_or_nothing": "same-or-nothing",
    "leader": "the leader",
    "winner": "the trick's winner",
    "giver": "the giver",
    "receiver": "the receiver",
    "automatic": "automatic",
    "active": "the revolution",
    "penalised": "the penalty for going out with 2s",
    "standings": "the places",
    "points": "the points",
    "totals": "the running totals",
    "game_over": "whether the game is over",
    "winners": "the winners",
    "stopped": "stopped",
    "players": "the players",
    "hands": "the hands",
    "set_aside": "the cards set aside",
    "previous_standings": "the previous places",
    "scores": "the scores",
    "must_include": "the card the first play must include",
    "round_no": "the round number",
    "game_no": "the game number",
    "moved_from": "the seat moves",
    "options": "the options",
}
"""A field of an event, as the sentence names it."""
_PLURAL = {
    "cards",
    "skipped",
    "standings",
    "points",
    "totals",
    "winners",
    "players",
    "hands",
    "set_aside",
    "previous_standings",
    "scores",
    "moved_from",
    "options",
}
"""Fields whose words are plural ("the places are ...")."""
_PER_SEAT = {"points", "totals", "scores"}
"""Fields with one value per seat: their differences are told seat by seat."""
