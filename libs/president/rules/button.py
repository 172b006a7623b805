"""The play button's words (rulebook 002): what a chosen set of cards would play, or why not.

"At the Club you tap cards of one rank to choose them, and the gold button
says what you'll play, such as “Play two 9s”. If your choice can't beat the
pile, a note says why." :func:`preview_play` asks the engine's own ``decide``
(so the note is the very sentence a refused play carries) and commits
nothing; :func:`play_label` is the button's words. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import (
    BLACK_JOKER,
    JOKER_RANK,
    RANK_WORDS,
    card_name,
    cards_of,
    has_duplicates,
    to_mask,
)
from president.rules.combos import POKER_KIND_NAMES, SET, classify
from president.rules.errors import ErrorCode, Rejected

SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")
COUNT_WORDS = {2: "two", 3: "three", 4: "four"}


@dataclass(frozen=True, slots=True)
class Preview:
    """What the button says (``label``), or the refusal a play of the cards would get."""

    label: str = ""
    refusal: Rejected | None = None

    @property
    def playable(self) -> bool:
        return self.refusal is None


def card_words(card: int) -> str:
    """One card in words: ``the 3 of clubs``, ``the queen of hearts``, ``the red joker``."""
    if card >= BLACK_JOKER:
        return "the black joker" if card == BLACK_JOKER else "the red joker"
    return f"the {RANK_WORDS[card >> 2]} of {SUIT_WORDS[card & 3]}"


def _some(rank: int, count: int) -> str:
    """``a 9``, ``an 8``, ``an ace``, ``two 9s``, ``three jacks``, ``two jokers``."""
    word = "joker" if rank == JOKER_RANK else RANK_WORDS[rank]
    if count == 1:
        return ("an " if word in ("8", "ace") else "a ") + word
    return f"{COUNT_WORDS[count]} {word}s"


def play_words(cards: int, named: int = 0) -> str:
    """What a play of ``cards`` (a one-rank set, or a poker hand) is, in words.

    ``named`` are cards the play must include (the first lead's 3 of clubs):
    the words name them, then the rest: ``the 3 of clubs and two 3s``.
    """
    indexes = cards_of(cards)
    if not indexes:
        return "nothing"
    rank = indexes[0] >> 2 if indexes[0] < BLACK_JOKER else JOKER_RANK
    if any((card >> 2 if card < BLACK_JOKER else JOKER_RANK) != rank for card in indexes):
        return " ".join(card_name(card) for card in indexes)
    shown = [card_words(card) for card in indexes if named >> card & 1]
    rest = (cards & ~named).bit_count()
    if rest:
        shown.append(_some(rank, rest))
    return " and ".join(shown)


def play_label(cards: int, named: int = 0, poker_kind: int = SET) -> str:
    """The button's words for an accepted play: ``Play two 9s``, ``Play a straight``."""
    if poker_kind != SET:
        return f"Play {POKER_KIND_NAMES[poker_kind]}"
    return f"Play {play_words(cards, named)}"


def named_twice(cards: Sequence[int]) -> Rejected | None:
    """The refusal of a play or a return that names a card more than once, if it does."""
    if not has_duplicates(list(cards)):
        return None
    twice = sorted({card_name(card) for card in cards if cards.count(card) > 1})
    return Rejected(
        ErrorCode.NOT_IN_HAND,
        f"you named {' '.join(twice)} more than once: a card is in your hand only once",
    )


def preview_play(game: g.GameState, seat: int, cards: Sequence[int]) -> Preview:
    """What the button says if ``seat`` chose ``cards`` now, or why the play would be refused.

    The play answers the trick as it is now (its trick version), as a client
    sends it; ``decide`` runs and its events are thrown away.
    """
    twice = named_twice(cards)
    if twice is not None:
        return Preview(refusal=twice)
    mask = to_mask(cards)
    state = game.round
    try:
        g.decide(game, rnd.PlayCards(seat, mask, state.trick_version if state else None))
    except Rejected as refusal:
        return Preview(refusal=refusal)
    assert state is not None  # an accepted play needs a round
    kind = classify(mask, state.options, state.revolution).kind
    return Preview(label=play_label(mask, state.must_include & mask, kind))
