"""The rules of account names, display names and passwords: one check each, with a sentence.

An account name is Unicode-normalised (NFKC) and unique ignoring case (its
key is :func:`president.servicekit.account_keys.account_key`, which the
gateway's LogIn rate limit uses too) and no other account's name may look
like it (:func:`skeleton`); it has 3 to 32 characters, letters, digits,
``_``, ``-`` and ``.``, and starts with a letter or a digit. A display name
follows the one rule of shown names (:mod:`president.servicekit.names`, which
the gateway and the table service check too). A password has 10 to 256
characters.
"""

from __future__ import annotations

import unicodedata

import icu

from president.servicekit.account_keys import account_key
from president.servicekit.checks import invalid
from president.servicekit.names import display_name

__all__ = ["account_name", "display_name", "password", "skeleton"]

NAME_MIN, NAME_MAX = 3, 32
PASSWORD_MIN, PASSWORD_MAX = 10, 256
NAME_PUNCTUATION = "_-."


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
    return name, account_key(name)


#: ICU's spoof checker (Unicode TR39); getSkeleton only reads its confusable data.
_SPOOF = icu.SpoofChecker()
#: The combining accents of Latin, Greek and Cyrillic (U+0300 to U+036F).
_ACCENTS = range(0x300, 0x370)


def skeleton(key: str) -> str:
    """What an account name's key looks like: two names with one skeleton look alike.

    Unicode TR39's skeleton (ICU's spoof checker: Cyrillic а and Latin a, a
    dotless ı and i, 0 and O share one) of the case-folded key, with the
    combining accents dropped too, so "zoë" looks like "zoe".
    """
    drawn = unicodedata.normalize("NFD", _SPOOF.getSkeleton(0, key))
    return unicodedata.normalize("NFC", "".join(ch for ch in drawn if ord(ch) not in _ACCENTS))


def password(raw: str) -> str:
    """The password, if long enough and not absurdly long (it is never normalised or logged)."""
    if not PASSWORD_MIN <= len(raw) <= PASSWORD_MAX:
        raise invalid(
            "INVALID_PASSWORD",
            f"a password has {PASSWORD_MIN} to {PASSWORD_MAX} characters",
        )
    return raw
