"""A practice table's ``bot_level`` option, at the gateway (AddBot's level is checked by
:func:`president.servicekit.checks.bot_level`).

``bot_level`` is a table option by name, but not a rule of the game: the
gateway takes it out of the options before they are checked and stored, and
puts the level where it lives, in each practice bot's player id
(:func:`president.rules.levels.bot_player_id`).
"""

from __future__ import annotations

from president.game.v1 import game_pb2 as gpb
from president.hosting.visibility import PRACTICE
from president.rules.levels import BASIC
from president.servicekit.checks import bot_level, invalid

#: The option naming the level of a practice table's bots.
BOT_LEVEL_OPTION = "bot_level"


def practice_level(
    message: gpb.TableOptions, visibility: str | None
) -> tuple[gpb.TableOptions, str]:
    """The table's options without ``bot_level``, and the level of its practice bots."""
    if BOT_LEVEL_OPTION not in message.options:
        return message, BASIC
    if visibility != PRACTICE:
        raise invalid(
            "INVALID_OPTIONS",
            f"option {BOT_LEVEL_OPTION} names the level of a practice table's bots; at other "
            "tables the host chooses each bot's level when adding it",
        )
    rest = gpb.TableOptions()
    rest.CopyFrom(message)
    return rest, bot_level(rest.options.pop(BOT_LEVEL_OPTION))
