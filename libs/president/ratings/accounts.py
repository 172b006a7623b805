"""Whose rating a seat's rounds count for: a person's account, or a bot level's account."""

from __future__ import annotations

from president.rules.levels import bot_account, level_of

_BOT = "bot:"


def rating_account(player_id: str) -> str:
    """The account a seat's player id is rated as (``bot:strong:2`` plays as ``bot:strong``)."""
    return bot_account(level_of(player_id)) if player_id.startswith(_BOT) else player_id


def is_bot(account: str) -> bool:
    """Whether ``account`` is a bot level's account (bots are rated, but earn no points board)."""
    return account.startswith(_BOT)
