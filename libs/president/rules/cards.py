"""Cards as small integers and hands as bitmasks.

A card's index is its position in the fresh deck of DEAL.md: for each rank
``3 4 5 6 7 8 9 10 J Q K A 2`` the suits ``C D H S``, then ``BJ`` and ``RJ``.
So ``index = rank * 4 + suit`` with rank 0 (the 3) to 12 (the 2), and the two
jokers share rank 13. A set of cards is an ``int`` with bit ``index`` set.
"""

from __future__ import annotations

from collections.abc import Iterable

RANK_NAMES = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2")
SUIT_NAMES = ("C", "D", "H", "S")
RANK_WORDS = ("3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king", "ace", "2")
JOKER_RANK = 13
RANK_TWO = 12
RANK_THREE = 0
BLACK_JOKER = 52
RED_JOKER = 53
STANDARD_DECK_SIZE = 52
DECK_WITH_JOKERS_SIZE = 54

FULL_DECK = (1 << STANDARD_DECK_SIZE) - 1
JOKERS = (1 << BLACK_JOKER) | (1 << RED_JOKER)
RANK_MASKS = tuple(0xF << (4 * rank) for rank in range(13)) + (JOKERS,)


def card_name(card: int) -> str:
    """``10H``, ``QS``, ``BJ``: the text of one card index."""
    if card == BLACK_JOKER:
        return "BJ"
    if card == RED_JOKER:
        return "RJ"
    if not 0 <= card < STANDARD_DECK_SIZE:
        raise ValueError(f"no card has index {card}")
    return RANK_NAMES[card >> 2] + SUIT_NAMES[card & 3]


_NAMES = tuple(card_name(card) for card in range(DECK_WITH_JOKERS_SIZE))
_BY_NAME = {card_name(card): card for card in range(DECK_WITH_JOKERS_SIZE)}


class CardSyntaxError(ValueError):
    """A card text that names no card."""


def parse_card(text: str) -> int:
    """The index of a card text, case-insensitive (``10h`` and ``10H`` alike)."""
    card = _BY_NAME.get(text.strip().upper())
    if card is None:
        raise CardSyntaxError(
            f"{text!r} is not a card: write the rank then the suit, as 10H, QS or 3C "
            "(jokers: BJ, RJ)"
        )
    return card


def parse_cards(texts: Iterable[str] | str) -> list[int]:
    """Card indexes in the order written; a string is split on white space."""
    if isinstance(texts, str):
        texts = texts.split()
    return [parse_card(text) for text in texts]


def to_mask(cards: Iterable[int]) -> int:
    """The bitmask of distinct cards (duplicates collapse; use :func:`has_duplicates`)."""
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def has_duplicates(cards: list[int]) -> bool:
    return len(set(cards)) != len(cards)


def cards_of(mask: int) -> list[int]:
    """Card indexes of a mask, weakest first in normal order (clubs first within a rank)."""
    cards = []
    while mask:
        low = mask & -mask
        cards.append(low.bit_length() - 1)
        mask ^= low
    return cards


def names(mask: int) -> list[str]:
    """Card texts of a mask, weakest first (as :func:`cards_of`, named; every view
    names every hand, so this skips the list of indexes and a call per card)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(_NAMES[low.bit_length() - 1])
        mask ^= low
    return out


def mask_of(texts: Iterable[str] | str) -> int:
    return to_mask(parse_cards(texts))


def strongest(mask: int, count: int) -> int:
    """The ``count`` strongest cards in normal order; ties by suit S, H, D, C first.

    These are simply the highest card indexes, jokers (RJ before BJ) first.
    """
    chosen = 0
    for _ in range(min(count, mask.bit_count())):
        top = 1 << (mask.bit_length() - 1)
        chosen |= top
        mask ^= top
    return chosen


def weakest(mask: int, count: int) -> int:
    """The ``count`` weakest cards in normal order (lowest indexes)."""
    chosen = 0
    for _ in range(min(count, mask.bit_count())):
        low = mask & -mask
        chosen |= low
        mask ^= low
    return chosen


def describe(mask: int) -> str:
    """Words for a play: ``a 9``, ``a pair of 8s``, ``three jacks``, ``4C 5C 6C 7C 8C``."""
    count = mask.bit_count()
    if count == 0:
        return "nothing"
    low = (mask & -mask).bit_length() - 1
    rank = low >> 2
    if mask & ~RANK_MASKS[rank]:
        return " ".join(names(mask))
    if rank == JOKER_RANK:
        return "a joker" if count == 1 else "two jokers"
    word = RANK_WORDS[rank]
    plural = word + ("es" if word.endswith("x") else "s")
    if count == 1:
        return ("an " if word in ("8", "ace") else "a ") + word
    return {2: "a pair of ", 3: "three ", 4: "four "}[count] + plural
