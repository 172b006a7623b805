"""The one canonical form of an account name: what makes two spellings the same account.

An account name is Unicode-normalised (NFKC), trimmed and case-folded, then
normalised again (case folding can undo NFKC). The players service stores
and looks accounts up by this key, and the gateway counts ``LogIn`` guesses
per account by the same key, so a fullwidth or mathematical spelling of a
name is the same account and the same rate limit.
"""

from __future__ import annotations

import unicodedata


def account_key(name: str) -> str:
    """The uniqueness key of an account name (also its LogIn rate limit's key)."""
    trimmed = unicodedata.normalize("NFKC", name).strip()
    return unicodedata.normalize("NFKC", trimmed.casefold())
