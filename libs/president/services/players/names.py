"""The rules of account names, display names and passwords: one check each, with a sentence.

An account name is Unicode-normalised (NFKC) and unique ignoring case (its
key is the case-folded form); it has 3 to 32 characters, letters, digits,
``_``, ``-`` and ``.``, and starts with a letter or a digit. A display name
has 1 to 40 characters, none of them control, format (bidi overrides,
zero-width) or unassigned, and is not only spaces. A password has 10 to 256
characters.
"""

from __future__ import annotations

import unicodedata

from president.servicekit.checks import invalid

NAME_MIN, NAME_MAX = 3, 32
DISPLAY_MAX = 40
PASSWORD_MIN, PASSWORD_MAX = 10, 256
NAME_PUNCTUATION = "_-."
#: Unicode categories never allowed in a shown name: controls, formats (bidi
#: marks, zero-width joiners), surrogates, private use, unassigned, and line
#: or paragraph separators.
FORBIDDEN_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def account_name(raw: str) -> tuple[str, str]:
    """The normalised account name and its uniqueness key (case-folded)."""
    name = unicodedata.normalize("NFKC", raw).strip()
    if not NAME_MIN <= len(name) <= NAME_MAX:
        raise invalid(
            "INVALID_ACCOUNT_NAME",
            f"an account name has {NAME_MIN} to {NAME_MAX} characters",
        )
    if not all(ch.isalnum() or ch in NAME_PUNCTUATION for ch in name) or not name[0].isalnum():
        raise invalid(
            "INVALID_ACCOUNT_NAME",
            "an account name has letters, digits, '_', '-' and '.', and starts with a letter "
            "or a digit",
        )
    return name, unicodedata.normalize("NFKC", name.casefold())


def display_name(raw: str) -> str:
    """The normalised display name shown at tables."""
    name = unicodedata.normalize("NFKC", raw).strip()
    if any(unicodedata.category(ch) in FORBIDDEN_CATEGORIES for ch in name):
        raise invalid(
            "INVALID_DISPLAY_NAME",
            "a display name may not hold control, direction-changing or invisible characters",
        )
    if not name or not any(not ch.isspace() for ch in name):
        raise invalid("INVALID_DISPLAY_NAME", "a display name needs at least one visible character")
    if len(name) > DISPLAY_MAX:
        raise invalid(
            "INVALID_DISPLAY_NAME", f"a display name has at most {DISPLAY_MAX} characters"
        )
    return name


def password(raw: str) -> str:
    """The password, if long enough and not absurdly long (it is never normalised or logged)."""
    if not PASSWORD_MIN <= len(raw) <= PASSWORD_MAX:
        raise invalid(
            "INVALID_PASSWORD",
            f"a password has {PASSWORD_MIN} to {PASSWORD_MAX} characters",
        )
    return raw
