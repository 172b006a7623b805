"""What a client's input must look like, as pure rules: the API refuses what breaks them, and
the audit refuses a stored log that holds it (one rule, one place).

Each ``*_problem`` function gives the sentence that says what is wrong, or None.
"""

from __future__ import annotations

import re

#: The longest command id a client may send (the gateway scopes it by player).
MAX_COMMAND_ID = 100
#: What the gateway's scope (``account@table:``) may add to a client's command id.
GATEWAY_PREFIX_MARGIN = 20
#: The longest command id the table service takes, and so the longest a log may hold.
MAX_STORED_COMMAND_ID = MAX_COMMAND_ID + GATEWAY_PREFIX_MARGIN
#: A reaction code: 1 to 32 lowercase letters, digits or _.
REACTION = re.compile(r"[a-z0-9_]{1,32}")
REACTION_MESSAGE = "a reaction is 1 to 32 lowercase letters, digits or _, such as thumbs_up"
STORED_COMMAND_ID_MESSAGE = f"a command id has at most {MAX_STORED_COMMAND_ID} printable characters"


def reaction_problem(code: str) -> str | None:
    """What is wrong with a reaction code (None: nothing)."""
    # fullmatch: match() with $ would take a trailing newline
    return None if REACTION.fullmatch(code) else REACTION_MESSAGE


def stored_command_id_problem(command_id: str) -> str | None:
    """What is wrong with a command id as the table service stores it (None: nothing)."""
    if len(command_id) > MAX_STORED_COMMAND_ID or not command_id.isprintable():
        return STORED_COMMAND_ID_MESSAGE
    return None
