"""What one seat knows of a round (its information set), and deals consistent with it.

:func:`information_set` keeps what the seat saw and nothing else: its own
hand, the public play (every card played, each seat's card count, the trick,
passes, places) and the exchange it took part in: the cards it gave (still
held by their receiver until played) and, when it received the automatic
gift of the strongest cards, that the giver holds nothing stronger than the
weakest of them (except what it was given back). Other seats' hands, dealt
hands, cards received and the cards set aside are blanked.

:func:`sample_world` deals the unseen cards at random in a way consistent
with that knowledge: a full :class:`RoundState` the engine can play on, for
the search of :mod:`president.rules.search`. The caller passes the random
source, so the rules stay free of randomness of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from president.rules.cards import FULL_DECK, JOKERS, cards_of
from president.rules.round.state import RoundState


class RandomSource(Protocol):
    """The random source a caller passes in: a seeded ``random.Random`` does."""

    def sample(self, population: Sequence[int], k: int) -> list[int]: ...


@dataclass(frozen=True, slots=True)
class InformationSet:
    """A round as ``seat`` knows it.

    ``view`` is the round with every card the seat could not see removed
    (others' hands, dealt hands and new cards are empty, nothing is set
    aside, only the seat's own gives are listed); ``counts`` the cards each
    seat holds; ``unseen`` the cards the seat has not seen (in other hands or
    set aside); ``known[s]`` the unseen cards the seat knows ``s`` holds and
    ``allowed[s]`` the unseen cards ``s`` may hold.
    """

    seat: int
    view: RoundState
    counts: tuple[int, ...]
    unseen: int
    known: tuple[int, ...]
    allowed: tuple[int, ...]


def information_set(state: RoundState, seat: int) -> InformationSet:
    """What ``seat`` knows of ``state``: the only input the strong bot gets."""
    seat_count = state.seat_count
    deck = FULL_DECK | (JOKERS if state.options.jokers else 0)
    hand = state.hands[seat]
    unseen = deck & ~hand & ~state.played
    own_gives = tuple(give for give in state.exchanged if seat in (give.giver, give.receiver))
    known = [0] * seat_count
    ceiling = [unseen] * seat_count
    for give in own_gives:
        if give.giver == seat:
            known[give.receiver] |= give.cards
        elif give.automatic:
            # The giver gave its strongest cards: it kept only weaker ones.
            weakest_given = (give.cards & -give.cards).bit_length() - 1
            ceiling[give.giver] &= (1 << weakest_given) - 1
    known = [cards & unseen for cards in known]
    allowed = tuple(ceiling[s] | known[s] for s in range(seat_count))
    only_own = tuple(cards if s == seat else 0 for s, cards in enumerate(state.hands))
    view = state._replace(
        hands=only_own,
        dealt=tuple(cards if s == seat else 0 for s, cards in enumerate(state.dealt)),
        new_cards=tuple(cards if s == seat else 0 for s, cards in enumerate(state.new_cards)),
        set_aside=0,
        exchanged=own_gives,
    )
    counts = tuple(cards.bit_count() for cards in state.hands)
    return InformationSet(seat, view, counts, unseen, tuple(known), allowed)


def sample_world(info: InformationSet, rng: RandomSource) -> RoundState:
    """A full round consistent with ``info``: the unseen cards dealt at random.

    Seats the seat knows most about are dealt first, from the cards they may
    hold; what no hand takes is set aside.
    """
    seat = info.seat
    pool = info.unseen
    for cards in info.known:
        pool &= ~cards
    hands = list(info.view.hands)
    others = [s for s in range(len(hands)) if s != seat and info.counts[s]]
    others.sort(key=lambda s: (info.allowed[s] == info.unseen, s))
    for other in others:
        known = info.known[other]
        need = info.counts[other] - known.bit_count()
        choices = cards_of(pool & info.allowed[other])
        if len(choices) < need:  # pragma: no cover - a view the round could not have made
            choices = cards_of(pool)
        dealt = known
        for card in rng.sample(choices, need):
            dealt |= 1 << card
        hands[other] = dealt
        pool &= ~dealt
    dealt_hands = tuple(hands[s] if s != seat else info.view.dealt[s] for s in range(len(hands)))
    return info.view._replace(hands=tuple(hands), dealt=dealt_hands, set_aside=pool)
