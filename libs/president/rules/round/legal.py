"""Legal actions: every move a seat may make now, built from the hand and the trick.

The plays are generated, not tried: which one-rank plays answer the top of the
trick depends only on the top, the revolution and a few options, so the answers
of each rank are looked up in tables made once per such case (the rule itself is
:func:`president.rules.combos.refusal`, as for a submitted play); the other
checks of :func:`president.rules.round.plays.check_play` (the seat, the first
lead's card, same or nothing, poker's four of a kind, the social rule) filter
what the tables give. No :class:`~president.rules.errors.Rejected` is raised:
refusals are for commands that come from outside.

The order is part of the wire (a seat's view lists its legal actions): the
one-rank plays by rank, 3 to 2 then jokers, each rank's subsets from the largest
bitmask down; then poker hands in the order of their cards; then the pass.
"""

from __future__ import annotations

from president.rules.cards import JOKER_RANK, JOKERS, RANK_MASKS
from president.rules.combos import (
    ANSWERS,
    SET,
    Combo,
    beats_fast_path,
    bits,
    classify,
    refusal,
)
from president.rules.options import Options
from president.rules.round.plays import NOT_SOCIAL
from president.rules.round.state import RoundPhase, RoundState

Action = tuple[str, int]
#: One rank's answers: for each nibble of the hand at that rank (its suits), the plays.
RankTable = tuple[tuple[int, ...], ...]

#: Read once: on Python 3.11 each ``RoundPhase.X`` costs an enum lookup, a hot path's share.
_EXCHANGE, _PLAY = RoundPhase.EXCHANGE, RoundPhase.PLAY
_PASS: Action = ("pass", 0)
_RANKS = range(JOKER_RANK + 1)
#: The shift of each rank's four bits in a hand (jokers: bits 52 and 53).
_SHIFTS = tuple(4 * rank for rank in _RANKS)


def _subsets(nibble: int) -> tuple[tuple[int, int, int], ...]:
    """The non-empty subsets of a rank's suits, largest bitmask first, with count and top suit."""
    out = []
    sub = nibble
    while sub:
        out.append((sub, sub.bit_count(), sub.bit_length() - 1))
        sub = (sub - 1) & nibble
    return tuple(out)


#: For each nibble of suits: its subsets, as :func:`_subsets`.
_SUBSETS = tuple(_subsets(nibble) for nibble in range(16))
#: ``_BY_SIZES[rank][sizes][nibble]``: the plays of that rank from those suits whose card
#: count is in ``sizes`` (bit ``n`` set: ``n`` cards), in the order of :data:`_SUBSETS`.
_BY_SIZES: tuple[tuple[RankTable, ...], ...] = tuple(
    tuple(
        tuple(
            tuple(sub << 4 * rank for sub, size, _ in _SUBSETS[nibble] if sizes >> size & 1)
            for nibble in range(16)
        )
        for sizes in range(32)
    )
    for rank in _RANKS
)
_ALL_SIZES = 0b11110
#: Leading a trick: every one-rank play.
_LEAD = tuple(_BY_SIZES[rank][_ALL_SIZES] for rank in _RANKS)
#: The one-rank answers to a top, by (top, revolution, and the options :func:`refusal` reads);
#: None: a poker hand is on top.
_ANSWER_TABLES: dict[tuple[object, ...], tuple[RankTable, ...] | None] = {}
_UNKNOWN: tuple[RankTable, ...] = ()


def legal_actions(state: RoundState, seat: int) -> list[Action]:
    """Every action ``seat`` may take now: ``("play", cards)``, ``("pass", 0)``, ``("give", …)``.

    Each listed action is accepted by :func:`decide`; every other is rejected.
    """
    phase = state.phase
    if phase == _EXCHANGE:
        owed = next((p for p in state.pending if p.giver == seat), None)
        if owed is None:
            return []
        return [("give", cards) for cards in subsets_of_size(state.hands[seat], owed.size)]
    hands = state.hands
    if phase != _PLAY or not 0 <= seat < len(hands) or not hands[seat]:
        return []
    hand = hands[seat]
    options = state.options
    top = state.top
    if options.rapid:
        if state.sat_out >> seat & 1:
            return []  # out of this trick: neither play nor pass
        plays = _answers(state, seat, hand, options)
        passes = top != 0 and seat != state.top_seat
    elif seat != state.to_act:
        # Out of turn only the social rule's completion of four of a kind may be played.
        if not (options.social and top):
            return []
        return [("play", cards) for cards in _completions(state, hand, options)]
    else:
        # The turn never reaches a seat out of the trick; if it did, it could only pass.
        plays = [] if state.sat_out >> seat & 1 else _answers(state, seat, hand, options)
        passes = top != 0
    actions = [("play", cards) for cards in plays]
    if passes:
        actions.append(_PASS)
    return actions


def _answers(state: RoundState, seat: int, hand: int, options: Options) -> list[int]:
    """The plays of ``hand`` that ``seat``, whose turn it is (or rapid), may make now."""
    top = state.top
    revolution = state.revolution
    tables: tuple[RankTable, ...] | None = _LEAD
    if top:
        key = (
            top,
            revolution,
            options.twos,
            options.exact_count,
            options.equal_rank_answers,
            options.suit_order,
        )
        tables = _ANSWER_TABLES.get(key, _UNKNOWN)
        if tables is _UNKNOWN:
            shape = classify(top, options, revolution)
            tables = None  # a poker hand on top: only poker hands answer
            if shape.kind == SET:
                tables = _answer_tables(shape, options, revolution)
            _ANSWER_TABLES[key] = tables
    same_or_nothing = state.same_or_nothing and seat == state.to_act
    plays: list[int] = []
    if tables is not None:
        if same_or_nothing:
            rank = state.run_rank
            if rank >= 0:
                plays.extend(tables[rank][hand >> 4 * rank & 15])
        else:
            for shift, table in zip(_SHIFTS, tables, strict=True):
                found = table[hand >> shift & 15]
                if found:
                    plays += found
    if options.poker_hands:
        # Four of a kind goes with a fifth card, unless it is the whole hand.
        plays = [cards for cards in plays if cards.bit_count() != 4 or cards == hand]
        top_combo = classify(top, options, revolution) if top else None
        for cards in poker_hands(hand):
            combo = classify(cards, options, revolution)
            if same_or_nothing and combo.rank != state.run_rank:
                continue
            if top_combo is not None and not _beats(combo, top_combo, options, revolution):
                continue
            plays.append(cards)
    must = state.must_include
    if must:
        plays = [cards for cards in plays if cards & must]
    return plays


def _completions(state: RoundState, hand: int, options: Options) -> list[int]:
    """Social rule, out of turn: the cards of ``hand`` that make the top's rank four of a kind."""
    rank = state.run_rank
    if rank < 0 or rank in NOT_SOCIAL:
        return []
    needed = 4 - state.run_count
    plays = [cards for cards in _LEAD[rank][hand >> 4 * rank & 15] if cards.bit_count() == needed]
    if options.poker_hands:
        plays = [cards for cards in plays if cards.bit_count() != 4 or cards == hand]
    must = state.must_include
    if must:
        plays = [cards for cards in plays if cards & must]
    return plays


def _beats(play: Combo, top: Combo, options: Options, revolution: bool) -> bool:
    """Whether ``play`` answers ``top``, decided as :func:`check_play` decides it."""
    return (
        beats_fast_path(play, top, options, revolution)
        or refusal(play, top, options, revolution) == ANSWERS
    )


def _answer_tables(top: Combo, options: Options, revolution: bool) -> tuple[RankTable, ...]:
    """For each rank, the one-rank plays that answer ``top`` (a set), by the hand's suits."""
    tables = []
    for rank in _RANKS:
        sizes = 0
        by_suit = False
        for size in range(1, 5):
            verdicts = {
                _beats(Combo(SET, size, rank, suit), top, options, revolution) for suit in range(4)
            }
            if verdicts == {True}:
                sizes |= 1 << size
            elif len(verdicts) == 2:
                by_suit = True
        if not by_suit:
            tables.append(_BY_SIZES[rank][sizes])
            continue
        tables.append(
            tuple(
                tuple(
                    sub << 4 * rank
                    for sub, size, suit in _SUBSETS[nibble]
                    if _beats(Combo(SET, size, rank, suit), top, options, revolution)
                )
                for nibble in range(16)
            )
        )
    return tuple(tables)


def poker_hands(hand: int) -> list[int]:
    """Every five-card poker hand of ``hand`` (jokers never count), in the order of their cards.

    Straights, flushes, full houses and four of a kind with a fifth card: exactly
    the five-card sets :func:`~president.rules.combos.classify` takes for a poker hand.
    """
    cards = hand & ~JOKERS
    groups = [cards & RANK_MASKS[rank] for rank in range(13)]
    found: set[int] = set()
    for rank, group in enumerate(groups):
        if group == RANK_MASKS[rank]:
            found.update(group | other for other in bits(cards & ~group))
    triples = [subsets_of_size(group, 3) for group in groups]
    pairs = [subsets_of_size(group, 2) for group in groups]
    for rank, three in enumerate(triples):
        for other, two in enumerate(pairs):
            if other != rank:
                found.update(a | b for a in three for b in two)
    for suit in range(4):
        suited = cards & _SUIT_MASKS[suit]
        if suited.bit_count() >= 5:
            found.update(subsets_of_size(suited, 5))
    for low in range(9):
        run = groups[low : low + 5]
        if all(run):
            straights = [0]
            for group in run:
                straights = [chosen | bit for chosen in straights for bit in bits(group)]
            found.update(straights)
    return sorted(found, key=_card_order)


_SUIT_MASKS = tuple(sum(1 << (4 * rank + suit) for rank in range(13)) for suit in range(4))


def _card_order(mask: int) -> list[int]:
    """The card indexes of ``mask``, lowest first: the order of :func:`subsets_of_size`."""
    return [bit.bit_length() - 1 for bit in bits(mask)]


def subsets_of_size(mask: int, size: int) -> list[int]:
    """Every set of ``size`` cards of ``mask``."""
    cards = [1 << c for c in range(54) if mask >> c & 1]
    out: list[int] = []

    def extend(start: int, chosen: int, left: int) -> None:
        if left == 0:
            out.append(chosen)
            return
        for index in range(start, len(cards) - left + 1):
            extend(index + 1, chosen | cards[index], left - 1)

    extend(0, 0, size)
    return out
