"""Events as JSON-ready dicts and as sentences a player reads."""

from __future__ import annotations

from typing import Any

from president.rules.cards import describe, names
from president.rules.round import (
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

_CARD_FIELDS = {"cards", "set_aside", "must_include"}


def _seat_or_none(value: int) -> int | None:
    return None if value < 0 else value


def event_to_dict(event: Event) -> dict[str, Any]:
    """An event as a JSON-ready dict: its type name, cards as text, -1 seats as null."""
    out: dict[str, Any] = {"type": type(event).__name__}
    for name, value in event._asdict().items():
        if name == "options":
            out[name] = value.to_dict()
        elif name in _CARD_FIELDS:
            out[name] = names(value)
        elif name == "hands":
            out[name] = [names(hand) for hand in value]
        elif name in ("next_to_act", "leader", "seat", "winner"):
            out[name] = _seat_or_none(value)
        elif isinstance(value, tuple):
            out[name] = list(value)
        else:
            out[name] = value
    return out


def seat_name(seat: int, seat_names: list[str] | None = None) -> str:
    if seat_names is not None and 0 <= seat < len(seat_names):
        return seat_names[seat]
    return f"Seat {seat}"


def event_to_text(event: Event, seat_names: list[str] | None = None) -> str | None:
    """One line for a player to read, or None for events that say nothing new."""

    def who(seat: int) -> str:
        return seat_name(seat, seat_names)

    if isinstance(event, RoundStarted):
        return f"Round {event.round_no} is dealt to {len(event.players)} players."
    if isinstance(event, CardsGiven):
        verb = "gives" if event.automatic else "returns"
        count = event.cards.bit_count()
        return (
            f"{who(event.giver)} {verb} {count} card{'s' * (count != 1)} to {who(event.receiver)}."
        )
    if isinstance(event, PlayStarted):
        if event.leader < 0:
            return "Play begins: anyone may open."
        return f"Play begins: {who(event.leader)} leads."
    if isinstance(event, CardsPlayed):
        line = f"{who(event.seat)} plays {describe(event.cards)} ({' '.join(names(event.cards))})."
        if event.skipped:
            line += " " + ", ".join(who(s) for s in event.skipped) + " skipped."
        if event.same_or_nothing:
            line += f" {who(event.next_to_act)}: same or nothing."
        return line
    if isinstance(event, Passed):
        return f"{who(event.seat)} passes."
    if isinstance(event, TrickClosed):
        leader = "anyone may open" if event.leader < 0 else f"{who(event.leader)} leads"
        return f"Trick won by {who(event.winner)}; {leader}."
    if isinstance(event, RevolutionChanged):
        return (
            "Revolution! The order is reversed."
            if event.active
            else "Counter-revolution: normal order."
        )
    if isinstance(event, PlayerWentOut):
        if event.penalised:
            return f"{who(event.seat)} went out with 2s and takes the worst free place."
        return f"{who(event.seat)} went out."
    if isinstance(event, RoundEnded):
        places = ", ".join(f"{i + 1}. {who(s)}" for i, s in enumerate(event.standings))
        return f"Round over: {places}."
    if isinstance(event, TimedOut):
        if event.seat < 0:
            return "Time is up."
        return f"Time is up for {who(event.seat)}: the server acts."
    return None  # pragma: no cover
