"""Input checks before anything is forwarded: each failure is INVALID_ARGUMENT with a sentence.

The checks other services share (table id, round numbers, reactions, chat, the cards of a
play, which the table service reads for every command) live in
:mod:`president.servicekit.checks`, and the rule of shown names (display and
table names) in :mod:`president.servicekit.names`; both are re-exported here.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from president.game.v1 import game_pb2 as gpb
from president.rules.game import MIN_TO_PLAY
from president.rules.options import PRESETS, OptionError, Options, count_range, options_for
from president.servicekit.checks import (
    MAX_COMMAND_ID,
    bot_level,
    cards,
    chat_text,
    invalid,
    reaction,
    round_number,
    table_id,
)
from president.servicekit.names import display_name, table_name

__all__ = [
    "bot_level",
    "cards",
    "chat_text",
    "command_id",
    "display_name",
    "invalid",
    "options",
    "reaction",
    "round_number",
    "seat_count",
    "table_id",
    "table_name",
]

MAX_OPTIONS = 40
MAX_OPTION_TEXT = 100
USUAL_SEATS = 4
DEFAULT_PRESET = "classic"


def options(message: gpb.TableOptions) -> Options:
    """The table's rules: a preset (classic when empty) and option overrides by name."""
    preset = message.preset or DEFAULT_PRESET
    if preset not in PRESETS:
        raise invalid(
            "INVALID_OPTIONS", f"unknown preset {preset!r}: choose one of {', '.join(PRESETS)}"
        )
    overrides: Mapping[str, str] = message.options
    if len(overrides) > MAX_OPTIONS:
        raise invalid("INVALID_OPTIONS", f"at most {MAX_OPTIONS} options, not {len(overrides)}")
    for name, value in overrides.items():
        if len(name) > MAX_OPTION_TEXT or len(value) > MAX_OPTION_TEXT:
            raise invalid(
                "INVALID_OPTIONS",
                f"option names and values have at most {MAX_OPTION_TEXT} characters",
            )
    try:
        return options_for(preset, dict(overrides))
    except OptionError as error:
        raise invalid("INVALID_OPTIONS", str(error)) from None


def seat_count(count: int, rules: Options) -> int:
    """The seats of a new table: 0 for the usual four (within the preset's range)."""
    low = max(MIN_TO_PLAY, rules.min_players)
    if count == 0:
        return min(max(USUAL_SEATS, low), rules.max_players)
    if not low <= count <= rules.max_players:
        raise invalid(
            "INVALID_SEAT_COUNT",
            f"a {rules.preset} table has {count_range(low, rules.max_players)} seats, not {count}",
        )
    return count


def command_id(value: str) -> str:
    """A client's command id (at most 100 characters), or a fresh one when empty."""
    if not value:
        return uuid.uuid4().hex
    if len(value) > MAX_COMMAND_ID:
        raise invalid(
            "INVALID_COMMAND_ID",
            f"a command id has at most {MAX_COMMAND_ID} characters, not {len(value)}",
        )
    if not value.isprintable():
        raise invalid("INVALID_COMMAND_ID", "a command id cannot hold control characters")
    return value
