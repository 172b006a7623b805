"""The one rule of text shown to other people (display names, table names), with a sentence.

A shown name is Unicode-normalised (NFKC) and trimmed; it holds no control
(C0, C1 such as CSI), format (bidi overrides, zero-width), surrogate,
private-use or unassigned character, nor a line or paragraph separator; it
has at most 40 characters and, unless it may be empty, at least one visible
one (not only spaces, blank fillers or combining marks). The players
service, the gateway and the table service all check names with it; the rule
itself is :func:`president.hosting.input_rules.shown_text_problem`, which chat
messages share (with a longer cap).
"""

from __future__ import annotations

from president.hosting.input_rules import normalised, shown_text_problem
from president.servicekit.checks import invalid

#: The longest shown name, in characters (after normalisation).
NAME_MAX = 40


def shown_name(raw: str, *, reason: str, what: str, required: bool = True) -> str:
    """``raw`` normalised, or INVALID_ARGUMENT with ``reason`` and a sentence about ``what``
    (such as "a display name"); an empty name is allowed unless ``required``."""
    name = normalised(raw)
    problem = shown_text_problem(name, what=what, limit=NAME_MAX, required=required)
    if problem is not None:
        raise invalid(reason, problem)
    return name


def display_name(raw: str, required: bool = True) -> str:
    """A person's or a seat's display name (INVALID_DISPLAY_NAME otherwise); the table
    service also takes none (``required`` false: a seat the server fills unnamed)."""
    return shown_name(raw, reason="INVALID_DISPLAY_NAME", what="a display name", required=required)


def table_name(raw: str) -> str:
    """A table's name: empty, or a shown name (INVALID_TABLE_NAME otherwise)."""
    return shown_name(raw, reason="INVALID_TABLE_NAME", what="a table name", required=False)
