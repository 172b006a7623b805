"""What a client's input must look like, as pure rules: the API refuses what breaks them, and
the audit refuses a stored log that holds it (one rule, one place).

Each ``*_problem`` function gives the sentence that says what is wrong, or None.
"""

from __future__ import annotations

import re
import unicodedata

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
#: The longest chat message, in characters (after normalisation).
CHAT_MAX = 200
#: Unicode categories never allowed in text shown to other people: controls, formats
#: (bidi marks, zero-width joiners), surrogates, private use, unassigned, and line or
#: paragraph separators.
FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
#: Letters and symbols that draw nothing (Hangul fillers, the blank Braille
#: pattern, the Mongolian vowel separator): a text of these alone is invisible.
BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")


def reaction_problem(code: str) -> str | None:
    """What is wrong with a reaction code (None: nothing)."""
    # fullmatch: match() with $ would take a trailing newline
    return None if REACTION.fullmatch(code) else REACTION_MESSAGE


def stored_command_id_problem(command_id: str) -> str | None:
    """What is wrong with a command id as the table service stores it (None: nothing)."""
    if len(command_id) > MAX_STORED_COMMAND_ID or not command_id.isprintable():
        return STORED_COMMAND_ID_MESSAGE
    return None


def normalised(raw: str) -> str:
    """Text as shown to other people is kept: Unicode-normalised (NFKC) and trimmed."""
    return unicodedata.normalize("NFKC", raw).strip()


def _visible(ch: str) -> bool:
    return not ch.isspace() and ch not in BLANKS and not unicodedata.category(ch).startswith("M")


def shown_text_problem(text: str, *, what: str, limit: int, required: bool) -> str | None:
    """What is wrong with ``text``, already :func:`normalised`, as text shown to other
    people (names, chat), in a sentence about ``what`` (None: nothing): no control,
    format or invisible character, at most ``limit`` characters, and (unless it may be
    empty) at least one visible one."""
    if any(unicodedata.category(ch) in FORBIDDEN_CATEGORIES for ch in text):
        return f"{what} may not hold control, direction-changing or invisible characters"
    if len(text) > limit:
        return f"{what} has at most {limit} characters, not {len(text)}"
    if (required or text) and not any(_visible(ch) for ch in text):
        return f"{what} needs at least one visible character"
    return None


def chat_problem(text: str) -> str | None:
    """What is wrong with a chat message as the table stores it (None: nothing): the
    shown-text rule of names with a longer cap, kept normalised."""
    problem = shown_text_problem(text, what="a chat message", limit=CHAT_MAX, required=True)
    if problem is None and normalised(text) != text:
        return "a chat message is kept Unicode-normalised (NFKC) and trimmed"
    return problem
