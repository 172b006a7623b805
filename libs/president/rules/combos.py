"""What a set of cards is as a play, and whether it beats the top of the trick.

A play is one to four cards of one rank (a *set*), or, with ``poker_hands``,
a five-card poker hand. Strength follows the current order: normal, or
reversed during a revolution; jokers always stand above everything.
"""

from __future__ import annotations

from typing import NamedTuple

from president.rules.cards import JOKER_RANK, JOKERS, RANK_MASKS, RANK_TWO, RANK_WORDS, describe
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import Options

SET = 0
STRAIGHT = 1
FLUSH = 2
FULL_HOUSE = 3
FOUR_AND_ONE = 4
STRAIGHT_FLUSH = 5
POKER_KIND_NAMES = {
    STRAIGHT: "a straight",
    FLUSH: "a flush",
    FULL_HOUSE: "a full house",
    FOUR_AND_ONE: "four of a kind with a fifth card",
    STRAIGHT_FLUSH: "a straight flush",
}


class Combo(NamedTuple):
    """A classified play: its kind, card count, main rank and highest suit."""

    kind: int
    size: int
    rank: int
    top_suit: int


def strength(rank: int, revolution: bool) -> int:
    """Order value of a rank: higher is stronger. Jokers stay on top in a revolution."""
    if rank == JOKER_RANK:
        return 99
    return 12 - rank if revolution else rank


def set_rank(cards: int) -> int:
    """The rank of a one-rank play, or -1 when the cards are not of one rank."""
    rank = ((cards & -cards).bit_length() - 1) >> 2
    return -1 if cards & ~RANK_MASKS[rank] else rank


#: Every one-rank play classified so far: a set is classified once, then looked up.
_SET_COMBOS: dict[int, Combo] = {}


def classify(cards: int, options: Options, revolution: bool = False) -> Combo:
    """Classify a non-empty play or raise ``INVALID_COMBINATION``."""
    known = _SET_COMBOS.get(cards)
    if known is not None:
        return known
    count = cards.bit_count()
    if count == 0:
        raise Rejected(ErrorCode.INVALID_COMBINATION, "a play needs at least one card")
    rank = set_rank(cards)
    if rank >= 0 and count <= 4:
        combo = _SET_COMBOS[cards] = Combo(SET, count, rank, (cards.bit_length() - 1) & 3)
        return combo
    if options.poker_hands and count == 5 and not cards & JOKERS:
        poker = _poker(cards, revolution)
        if poker is not None:
            return poker
    if options.poker_hands:
        raise Rejected(
            ErrorCode.INVALID_COMBINATION,
            "a play is one to four cards of one rank, or a five-card poker hand",
        )
    raise Rejected(
        ErrorCode.INVALID_COMBINATION,
        "a play is one to four cards of one rank: a single, a pair, three or four of a kind",
    )


def _poker(cards: int, revolution: bool) -> Combo | None:
    counts = [(cards & RANK_MASKS[rank]).bit_count() for rank in range(13)]
    present = [rank for rank in range(13) if counts[rank]]
    suits = {(card_bit.bit_length() - 1) & 3 for card_bit in bits(cards)}
    flush = len(suits) == 1
    straight = len(present) == 5 and present[-1] - present[0] == 4
    top_suit = (cards.bit_length() - 1) & 3
    best = max(present, key=lambda rank: strength(rank, revolution))
    if straight and flush:
        return Combo(STRAIGHT_FLUSH, 5, best, top_suit)
    shape = sorted((counts[rank] for rank in present), reverse=True)
    if shape == [4, 1]:
        return Combo(FOUR_AND_ONE, 5, next(r for r in present if counts[r] == 4), top_suit)
    if shape == [3, 2]:
        return Combo(FULL_HOUSE, 5, next(r for r in present if counts[r] == 3), top_suit)
    if flush:
        return Combo(FLUSH, 5, best, top_suit)
    if straight:
        return Combo(STRAIGHT, 5, best, top_suit)
    return None


def bits(mask: int) -> list[int]:
    """Each set bit of ``mask`` on its own (one card each), lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low)
        mask ^= low
    return out


def beats_fast_path(play: Combo, top: Combo, options: Options, revolution: bool) -> bool:
    """True when ``play`` answers ``top`` by the plain comparison; False: ask :func:`check_beats`.

    The common case of :func:`check_beats`, without its branches: under
    ``options.plain_compare`` (one rank against one rank, exact counts, no
    jokers, special 2s, suits or poker) and the same count, it is True exactly
    when ``check_beats`` accepts.
    """
    if options.plain_compare and play.size == top.size:
        if revolution:
            mine, theirs = 12 - play.rank, 12 - top.rank
        else:
            mine, theirs = play.rank, top.rank
        return mine > theirs or (mine == theirs and options.equal_rank_answers)
    return False


#: What :func:`refusal` finds: the play answers the top, or the rule that refuses it.
ANSWERS = 0
NOTHING_BEATS_JOKER = 1
ONLY_TWOS_BEAT_TWO = 2
COUNT_DIFFERS = 3
SET_TOO_LOW = 4
SET_AGAINST_POKER = 5
POKER_AGAINST_SET = 6
POKER_TOO_LOW = 7


def refusal(play: Combo, top: Combo, options: Options, revolution: bool) -> int:
    """:data:`ANSWERS` when ``play`` answers ``top``, else the rule that refuses it.

    The one statement of what beats what: :func:`check_beats` words a refusal
    for a submitted play, and legal actions keep the plays this answers.
    """
    if play.kind != SET or top.kind != SET:
        if play.kind == SET:
            return SET_AGAINST_POKER
        if top.kind == SET:
            return POKER_AGAINST_SET
        if (play.kind, strength(play.rank, revolution)) > (
            top.kind,
            strength(top.rank, revolution),
        ):
            return ANSWERS
        return POKER_TOO_LOW
    if play.rank == JOKER_RANK and play.size == 1 and top.size <= 3:
        # a single joker beats any single, pair or triple, but not a joker
        return NOTHING_BEATS_JOKER if top.rank == JOKER_RANK else ANSWERS
    if options.twos == "only_twos_beat_two" and top.rank == RANK_TWO:
        return ANSWERS if play.rank == RANK_TWO and play.size > top.size else ONLY_TWOS_BEAT_TWO
    if (
        options.twos == "up_a_count"
        and play.rank == RANK_TWO
        and top.rank != RANK_TWO
        and top.rank != JOKER_RANK
        and play.size + 1 == top.size
    ):
        return ANSWERS  # n twos beat any n + 1 cards
    if play.size != top.size:
        if not options.exact_count and play.size > top.size:
            return ANSWERS  # more cards beat fewer
        return COUNT_DIFFERS
    mine = strength(play.rank, revolution)
    theirs = strength(top.rank, revolution)
    if mine > theirs:
        return ANSWERS
    if mine == theirs:
        if options.equal_rank_answers:
            return ANSWERS
        if options.suit_order and play.top_suit > top.top_suit:
            return ANSWERS
    return SET_TOO_LOW


def check_beats(
    play: Combo, play_cards: int, top: Combo, top_cards: int, options: Options, revolution: bool
) -> None:
    """Raise ``WRONG_COUNT`` or ``TOO_LOW`` unless ``play`` answers ``top`` (:func:`refusal`)."""
    why = refusal(play, top, options, revolution)
    if why == ANSWERS:
        return
    if why == NOTHING_BEATS_JOKER:
        raise Rejected(ErrorCode.TOO_LOW, "nothing beats a joker")
    if why == ONLY_TWOS_BEAT_TWO:
        raise Rejected(
            ErrorCode.TOO_LOW, lambda: f"only more 2s or a joker beat {describe(top_cards)}"
        )
    if why == COUNT_DIFFERS:
        raise Rejected(ErrorCode.WRONG_COUNT, lambda: _count_reason(top, top_cards, options))
    if why == SET_TOO_LOW:
        raise Rejected(ErrorCode.TOO_LOW, lambda: _low_reason(top, top_cards, options, revolution))
    if why == SET_AGAINST_POKER:
        raise Rejected(
            ErrorCode.WRONG_COUNT,
            f"{POKER_KIND_NAMES[top.kind]} is answered only by a higher five-card poker hand",
        )
    if why == POKER_AGAINST_SET:
        raise Rejected(
            ErrorCode.WRONG_COUNT,
            f"a five-card hand cannot answer {describe(top_cards)}; poker hands only lead "
            "or answer poker hands",
        )
    raise Rejected(
        ErrorCode.TOO_LOW,
        f"{POKER_KIND_NAMES[play.kind]} does not beat {POKER_KIND_NAMES[top.kind]} "
        f"of {describe(top_cards)}",
    )


def _count_reason(top: Combo, top_cards: int, options: Options) -> str:
    needed = {1: "a single card", 2: "a pair", 3: "three of a kind", 4: "four of a kind"}
    what = needed.get(top.size, f"{top.size} cards")
    if options.exact_count:
        return f"{describe(top_cards)} must be answered with {what}"
    return f"{describe(top_cards)} must be answered with {what} or more cards"


def _low_reason(top: Combo, top_cards: int, options: Options, revolution: bool) -> str:
    shape = describe(top_cards)
    if top.rank == JOKER_RANK:
        return f"nothing beats {shape}"
    step = -1 if revolution else 1
    next_rank = top.rank + step
    word = "lower" if revolution else "higher"
    if options.equal_rank_answers:
        return f"{shape} needs the same rank or {word}"
    if 0 <= next_rank <= 12:
        example = describe(RANK_MASKS[next_rank] & ((1 << (4 * next_rank + top.size)) - 1))
        return f"{shape} needs {example} or {word}"
    return f"nothing of that shape beats {shape}"


__all__ = [
    "RANK_WORDS",
    "SET",
    "Combo",
    "beats_fast_path",
    "check_beats",
    "classify",
    "refusal",
    "set_rank",
    "strength",
]
