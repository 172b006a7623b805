"""Bot levels: their names, the player id that carries a bot's level, and each level's account.

A bot's level lives in one place, its player id ``bot:<level>:<tag>`` (as
``bot:strong:2``); any other player id a bot plays for (a practice bot of old,
a player who left mid-round) plays at ``basic``. Each level has one account,
``bot:<level>``, that later ratings credit its rounds to.
"""

from __future__ import annotations

BASIC = "basic"
STRONG = "strong"
LEVELS = (BASIC, STRONG)
_PREFIX = "bot:"


class UnknownBotLevel(ValueError):
    """A level that is not one of :data:`LEVELS`."""


def check_level(level: str) -> str:
    """``level`` if it is a level (an empty one is ``basic``); :class:`UnknownBotLevel` if not."""
    if not level:
        return BASIC
    if level not in LEVELS:
        raise UnknownBotLevel(f"there is no bot level {level!r}: choose {' or '.join(LEVELS)}")
    return level


def bot_player_id(level: str, tag: str) -> str:
    """The player id of a bot at ``level``; ``tag`` tells it from the table's other bots."""
    return f"{_PREFIX}{check_level(level)}:{tag}"


def level_of(player_id: str) -> str:
    """The level a bot with this player id plays at (``basic`` unless the id names another)."""
    if player_id.startswith(_PREFIX):
        level, separator, _ = player_id[len(_PREFIX) :].partition(":")
        if separator and level in LEVELS:
            return level
    return BASIC


def bot_account(level: str) -> str:
    """The one account every bot of ``level`` plays as: ``bot:basic``, ``bot:strong``."""
    return f"{_PREFIX}{check_level(level)}"


def check_bot_player_id(player_id: str) -> None:
    """:class:`UnknownBotLevel` if ``player_id`` looks like ``bot:<level>:<tag>`` with a level
    that does not exist (a table must not seat a bot whose level nobody can play)."""
    if player_id.startswith(_PREFIX):
        level, separator, _ = player_id[len(_PREFIX) :].partition(":")
        if separator:
            check_level(level)
