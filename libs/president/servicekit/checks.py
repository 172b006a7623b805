"""Input checks shared by the services: each failure is INVALID_ARGUMENT with a sentence."""

from __future__ import annotations

from collections.abc import Sequence

from president.hosting.input_rules import (
    MAX_COMMAND_ID,
    MAX_STORED_COMMAND_ID,
    chat_problem,
    normalised,
    reaction_problem,
    stored_command_id_problem,
)
from president.rules.cards import CardSyntaxError, parse_card
from president.rules.levels import UnknownBotLevel, check_bot_player_id, check_level
from president.servicekit.errors import Code, ServiceError
from president.servicekit.nats import valid_table_id

__all__ = ["MAX_COMMAND_ID", "MAX_STORED_COMMAND_ID"]  # re-exported for the gateway

TABLE_ID_MESSAGE = "a table id is 1 to 64 letters, digits, - or _"
ROUND_MESSAGE = "game and round numbers start at 1"
#: The most cards one play or return names (four of a kind and a joker).
MAX_CARDS = 5
#: The longest text of one card ("10H"; a joker "BJ"), with room for blanks around it.
MAX_CARD_TEXT = 4


def invalid(reason: str, message: str) -> ServiceError:
    """An INVALID_ARGUMENT refusal."""
    return ServiceError(Code.INVALID_ARGUMENT, reason, message)


def table_id(value: str) -> str:
    """A table id that can name a stream and a subject (INVALID_TABLE_ID otherwise)."""
    if not valid_table_id(value):
        raise invalid("INVALID_TABLE_ID", TABLE_ID_MESSAGE)
    return value


def round_number(game_no: int, round_no: int) -> None:
    """Game and round numbers start at 1 (INVALID_ROUND otherwise)."""
    if game_no < 1 or round_no < 1:
        raise invalid("INVALID_ROUND", ROUND_MESSAGE)


def reaction(value: str) -> str:
    """A reaction code (INVALID_REACTION otherwise)."""
    problem = reaction_problem(value)
    if problem is not None:
        raise invalid("INVALID_REACTION", problem)
    return value


def chat_text(value: str) -> str:
    """A chat message, normalised (NFKC, trimmed) (INVALID_CHAT otherwise): the rule the
    audit holds a stored message to (:func:`president.hosting.input_rules.chat_problem`)."""
    text = normalised(value)
    problem = chat_problem(text)
    if problem is not None:
        raise invalid("INVALID_CHAT", problem)
    return text


def stored_command_id(value: str) -> str:
    """A command id the table service may store (INVALID_COMMAND_ID otherwise)."""
    problem = stored_command_id_problem(value)
    if problem is not None:
        raise invalid("INVALID_COMMAND_ID", problem)
    return value


def bot_level(value: str) -> str:
    """A bot level, empty for ``basic`` (UNKNOWN_BOT_LEVEL otherwise)."""
    try:
        return check_level(value)
    except UnknownBotLevel as error:
        raise invalid("UNKNOWN_BOT_LEVEL", str(error)) from None


def bot_player(player_id: str) -> str:
    """A bot's player id, whose level (if it names one) exists (UNKNOWN_BOT_LEVEL otherwise)."""
    try:
        check_bot_player_id(player_id)
    except UnknownBotLevel as error:
        raise invalid("UNKNOWN_BOT_LEVEL", str(error)) from None
    return player_id


def cards(texts: Sequence[str]) -> list[int]:
    """The cards one to five card texts name, in the order written (a card written twice
    stays twice: the rules refuse it as NOT_IN_HAND); MALFORMED_CARDS otherwise.

    The one parser of a client's cards: the table service's commands and the gateway's
    preview of a play both read them here.
    """
    if not texts:
        raise invalid("MALFORMED_CARDS", "name at least one card, as 10H, QS or 3C")
    if len(texts) > MAX_CARDS:
        raise invalid(
            "MALFORMED_CARDS", f"a play or a return has at most {MAX_CARDS} cards, not {len(texts)}"
        )
    out = []
    for text in texts:
        if len(text) > MAX_CARD_TEXT:
            raise invalid("MALFORMED_CARDS", f"{text[:12]!r}… is not a card: write 10H, QS or 3C")
        try:
            out.append(parse_card(text))
        except CardSyntaxError as error:
            raise invalid("MALFORMED_CARDS", str(error)) from None
    return out
