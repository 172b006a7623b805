"""The one rule of text shown to other people (display names, table names), with a sentence.

A shown name is Unicode-normalised (NFKC) and trimmed; it holds no control
(C0, C1 such as CSI), format (bidi overrides, zero-width), surrogate,
private-use or unassigned character, nor a line or paragraph separator; it
has at most 40 characters and, unless it may be empty, at least one visible
one (not only spaces, blank fillers or combining marks). The players
service, the gateway and the table service all check names with it.
"""

from __future__ import annotations

import unicodedata

from president.servicekit.checks import invalid

#: The longest shown name, in characters (after normalisation).
NAME_MAX = 40
#: Unicode categories never allowed in a shown name: controls, formats (bidi
#: marks, zero-width joiners), surrogates, private use, unassigned, and line
#: or paragraph separators.
FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
#: Letters and symbols that draw nothing (Hangul fillers, the blank Braille
#: pattern, the Mongolian vowel separator): a name of these alone is invisible.
BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")


def _visible(ch: str) -> bool:
    return not ch.isspace() and ch not in BLANKS and not unicodedata.category(ch).startswith("M")


def shown_name(raw: str, *, reason: str, what: str, required: bool = True) -> str:
    """``raw`` normalised, or INVALID_ARGUMENT with ``reason`` and a sentence about ``what``
    (such as "a display name"); an empty name is allowed unless ``required``."""
    name = unicodedata.normalize("NFKC", raw).strip()
    if any(unicodedata.category(ch) in FORBIDDEN_CATEGORIES for ch in name):
        raise invalid(
            reason, f"{what} may not hold control, direction-changing or invisible characters"
        )
    if len(name) > NAME_MAX:
        raise invalid(reason, f"{what} has at most {NAME_MAX} characters, not {len(name)}")
    if (required or name) and not any(_visible(ch) for ch in name):
        raise invalid(reason, f"{what} needs at least one visible character")
    return name


def display_name(raw: str, required: bool = True) -> str:
    """A person's or a seat's display name (INVALID_DISPLAY_NAME otherwise); the table
    service also takes none (``required`` false: a seat the server fills unnamed)."""
    return shown_name(raw, reason="INVALID_DISPLAY_NAME", what="a display name", required=required)


def table_name(raw: str) -> str:
    """A table's name: empty, or a shown name (INVALID_TABLE_NAME otherwise)."""
    return shown_name(raw, reason="INVALID_TABLE_NAME", what="a table name", required=False)
