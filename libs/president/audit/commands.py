"""A stored log read as commands: its events decoded, grouped by command id, and the
command each group implies rebuilt (``CardsPlayed`` -> ``PlayCards``, ``Passed`` ->
``Pass``, ...), so the rules can be asked again what that command gives.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from president import codec
from president.hosting.events import TableEvent
from president.rules import game as g
from president.rules import round as rnd
from president.store import StoredEvent

Command = g.GameCommand | rnd.Command
"""A command of the table or of the round."""


def decode(event: StoredEvent) -> TableEvent:
    """A stored event decoded (:class:`president.codec.NotAnEvent` for a type that is none)."""
    return codec.decode(event.type, event.payload)


def command_groups(events: Sequence[StoredEvent]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` index ranges of consecutive events that share a command id."""
    start = 0
    count = len(events)
    while start < count:
        command_id = events[start].metadata.get("command_id")
        end = start + 1
        while end < count and events[end].metadata.get("command_id") == command_id:
            end += 1
        yield start, end
        start = end


def command_for(first: TableEvent, game: g.GameState) -> Command | None:
    """The command a group of stored events starting with ``first`` implies (None: none)."""
    kind = type(first)
    if kind is rnd.CardsPlayed:
        return rnd.PlayCards(first.seat, first.cards)  # type: ignore[union-attr]
    if kind is rnd.Passed:
        return rnd.Pass(first.seat)  # type: ignore[union-attr]
    if kind is rnd.CardsGiven:
        if first.automatic:  # type: ignore[union-attr]
            return None
        return rnd.ReturnCards(first.giver, first.cards)  # type: ignore[union-attr]
    if kind is rnd.TimedOut:
        return rnd.Timeout()
    if kind is rnd.RoundStarted:
        return g.DealRound(first.hands, first.set_aside)  # type: ignore[union-attr]
    if kind is g.SeatTaken:
        return g.SitDown(first.seat, first.player, first.is_bot, first.display_name)  # type: ignore[union-attr]
    if kind is g.SeatLeft:
        return g.Leave(first.seat, first.removed)  # type: ignore[union-attr]
    if kind is g.GameStarted:
        return g.PlayAgain() if game.phase == g.GamePhase.GAME_OVER else g.StartGame()
    if kind is g.NextRoundStarted or kind is g.SeatsChanged:
        return g.NextRound()
    if kind is g.GameEnded:
        return g.EndGame()
    if kind is g.ReturnedToLobby:
        return g.BackToLobby()
    return None
