"""A table's events in words, the activity panel's sentences (rulebook 000), for any event.

The engine's sentences (:mod:`president.rules.render`, the game's
:func:`president.rules.game.describe_game_event`) and the table service's own
events' sentences here. Pure: an event and the seats' names in, a line out.
A sentence is made from the event as its reader receives it (redacted), so
it can never say more than the event shows.
"""

from __future__ import annotations

from collections.abc import Sequence

from president.hosting import events as ev
from president.rules import game as g
from president.rules import round as rnd
from president.rules.render import event_to_text


def describe(event: ev.TableEvent, names: Sequence[str]) -> str | None:
    """One line for a person to read of any table event, as its reader was shown it (a
    redacted exchange says who gave to whom, not what); None for events that say nothing.
    ``names``: the display names by seat."""
    names = [*names]
    if isinstance(event, ev.TableCreated):
        return f"Table created: {event.preset}, {event.seat_count} seats."
    if isinstance(event, ev.DealCommitted):
        return (
            f"Round {event.round_no} of game {event.game_no}: deal committed, "
            f"fingerprint {event.fingerprint[:16]}…"
        )
    if isinstance(event, ev.DealRevealed):
        return f"Secret of round {event.round_no} revealed: {event.secret_hex[:16]}…"
    if isinstance(event, ev.DealSecretLost):
        return f"Secret of round {event.round_no} lost by the dealer: that commitment is unchecked."
    if isinstance(event, ev.ReactionShown):
        return f"{names[event.seat]} reacts: {event.reaction}."
    if isinstance(event, ev.ChatPosted):
        return f"{names[event.seat]}: {event.text}"
    if isinstance(event, ev.SeatMuted):
        return f"The host {'muted' if event.muted else 'unmuted'} {names[event.seat]}."
    if isinstance(event, ev.TableClosed):
        return f"The table closed: {event.reason}."
    if isinstance(event, ev.SeatPresence):
        return f"{names[event.seat]} {'is back' if event.connected else 'is away'}."
    if isinstance(event, ev.HostChanged):
        return (
            "The host left: the next player in seat order is the host."
            if event.automatic
            else "The host handed the host role to another player."
        )
    if isinstance(event, rnd.CardsGiven) and not event.cards:
        return f"{names[event.giver]} gives cards to {names[event.receiver]}."
    if isinstance(event, rnd.RoundEnded):
        places = ", ".join(f"{i + 1}. {names[s]}" for i, s in enumerate(event.standings))
        totals = ", ".join(f"{names[s]} {event.totals[s]}" for s in sorted(event.standings))
        return f"Round over: {places}. Totals: {totals}."
    if isinstance(event, rnd.RoundStarted | rnd.CardsGiven | rnd.PlayStarted | rnd.CardsPlayed):
        return event_to_text(event, names)
    if isinstance(event, rnd.Passed | rnd.TrickClosed | rnd.RevolutionChanged):
        return event_to_text(event, names)
    if isinstance(event, rnd.PlayerWentOut | rnd.TimedOut):
        return event_to_text(event, names)
    return g.describe_game_event(event, names)
