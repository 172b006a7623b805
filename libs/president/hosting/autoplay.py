"""The move a bot (or a stand-in for a player who left) makes next at a hosted table."""

from __future__ import annotations

from president.rules import bots
from president.rules import game as g
from president.rules import round as rnd


def next_bot_command(game: g.GameState) -> tuple[int, rnd.Command] | None:
    """The next move a bot (or a stand-in for a player who left) makes, if any, and its seat.

    In the exchange the first bot that owes cards returns them; in turn-based
    play the bot whose turn it is moves; in rapid play the lowest bot seat
    that has a move makes it.
    """
    state = game.round
    if game.phase != g.GamePhase.ROUND or state is None:
        return None
    bot_seats = g.bot_seats(game)
    if not bot_seats:
        return None
    if state.phase == rnd.RoundPhase.EXCHANGE:
        for owed in state.pending:
            if owed.giver in bot_seats:
                cards = bots.choose_return(state, owed.giver, owed.size)
                return owed.giver, rnd.ReturnCards(owed.giver, cards)
        return None
    if not state.options.rapid:
        if state.to_act in bot_seats:
            command = bots.choose_action(state, state.to_act)
            return (state.to_act, command) if command is not None else None
        return None
    for seat in bot_seats:
        command = bots.choose_action(state, seat)
        if command is not None:
            return seat, command
    return None


#: The account of the server's bots (and of the stand-in that plays a leaver's seat).
BASIC_BOT = "bot:basic"


def bot_actor(game: g.GameState, seat: int) -> str:
    """The account a bot's move at ``seat`` is recorded as: the bot's own (``bot:<level>``),
    or the basic bot's when it stands in for a player who left."""
    occupant = game.seats[seat]
    if occupant.is_bot and occupant.player:
        return occupant.player
    return BASIC_BOT
