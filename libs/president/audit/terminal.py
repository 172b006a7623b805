"""Stored text as the auditor's terminal may show it: :func:`visible`.

A log holds strings a client chose (names, reactions, reasons). Printed raw, an
escape sequence (ESC, OSC) would drive the auditor's terminal and a bidi
control would reorder what it shows. Every character that is not a visible
one (Unicode's control, format, surrogate, private and unassigned categories,
line and paragraph separators) is written out as its escape instead
(``\\x1b``, ``\\u202e``), so the auditor sees it is there.
"""

from __future__ import annotations

import unicodedata

_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _shown(char: str) -> str:
    if unicodedata.category(char) not in _HIDDEN:
        return char
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every invisible or controlling character written as its escape;
    line breaks kept (the caller's own lines), a backslash doubled so nothing is ambiguous."""
    return "\n".join(
        "".join(_shown(char) for char in line.replace("\\", "\\\\")) for line in text.split("\n")
    )
