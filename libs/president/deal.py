"""The committed deal of DEAL.md: secret, fingerprint, random stream, shuffle and deal.

Pure: no I/O, no clock, and no randomness except :func:`new_secret`. Everything
else is a function of the 32-byte secret, so anyone holding it re-creates the
deal exactly. DEAL.md of the shared design docs (``president-deal-v1``) is the
contract; every step here follows it byte for byte, and a change to any of them
is a new version tag.

Cards are the indexes of :mod:`president.rules.cards`: the position of a card in
the fresh deck (``rank * 4 + suit``, then ``BJ`` = 52 and ``RJ`` = 53).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from president.rules.cards import to_mask

_Item = TypeVar("_Item")

DEAL_VERSION = "president-deal-v1"
SECRET_SIZE = 32
STANDARD_DECK_SIZE = 52
DECK_WITH_JOKERS_SIZE = 54
MIN_PLAYERS = 2

_TAG = DEAL_VERSION.encode("ascii")
_STREAM_TAG = _TAG + b"/stream"
_TWO_32 = 1 << 32
_BLOCK_WORDS = struct.Struct(">8I")  # one 32-byte HMAC-SHA256 block = 8 big-endian uint32
_BLOCK_INDEX = struct.Struct(">Q")  # uint64 big-endian block number


def _checked_secret(secret: bytes) -> bytes:
    if not isinstance(secret, bytes | bytearray | memoryview):
        raise TypeError(
            f"The deal's secret must be bytes, not {type(secret).__name__} "
            "(for a hex text, use bytes.fromhex)."
        )
    key = bytes(secret)
    if len(key) != SECRET_SIZE:
        raise ValueError(
            f"The deal's secret must be exactly {SECRET_SIZE} bytes; this one has {len(key)}."
        )
    return key


def new_secret() -> bytes:
    """A fresh secret for one round: 32 bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(SECRET_SIZE)


def fingerprint(secret: bytes) -> str:
    """The round's fingerprint: lowercase hex SHA-256 of ``b"president-deal-v1" || secret``."""
    return _fingerprint(_checked_secret(secret))


def _fingerprint(key: bytes) -> str:
    return hashlib.sha256(_TAG + key).hexdigest()


def verify_fingerprint(secret: bytes, fingerprint: str) -> bool:
    """Whether ``secret`` has the recorded fingerprint, compared in constant time.

    The comparison is exact: a fingerprint is written in lowercase hex, so an
    upper-case or padded text does not match. A secret of the wrong length is
    not a secret of this deal and raises :class:`ValueError`.
    """
    expected = _fingerprint(_checked_secret(secret)).encode("ascii")
    return hmac.compare_digest(expected, fingerprint.encode("utf-8"))


def stream_block(secret: bytes, k: int) -> bytes:
    """Block ``k`` of the stream.

    ``HMAC-SHA256(key = secret, msg = b"president-deal-v1/stream" || uint64_big_endian(k))``.
    """
    key = _checked_secret(secret)
    if not 0 <= k < 1 << 64:
        raise ValueError(f"A block number must be from 0 to 2^64 - 1; got {k}.")
    return hmac.digest(key, _STREAM_TAG + _BLOCK_INDEX.pack(k), "sha256")


class RandomStream:
    """The deal's random stream: blocks 0, 1, ... read as big-endian uint32 values.

    One stream serves every step of one deal, in order. ``prefix`` is what
    each block's message starts with before the block number: the deal's own
    ``b"president-deal-v1/stream"`` unless another committed draw (the seat draw
    of SEAT_DRAW.md) reuses the construction under a label of its own.
    """

    def __init__(self, secret: bytes, prefix: bytes = _STREAM_TAG) -> None:
        self._key = _checked_secret(secret)
        self._prefix = bytes(prefix)
        self._next_block = 0
        self._words: tuple[int, ...] = ()
        self._position = 0

    @property
    def words_read(self) -> int:
        """How many uint32 values were drawn so far, rejected draws included."""
        return 8 * self._next_block - (len(self._words) - self._position)

    def _refill(self) -> None:
        block = hmac.digest(self._key, self._prefix + _BLOCK_INDEX.pack(self._next_block), "sha256")
        self._words = _BLOCK_WORDS.unpack(block)
        self._next_block += 1
        self._position = 0

    def next_u32(self) -> int:
        """The next unsigned 32-bit value of the stream."""
        if self._position == len(self._words):
            self._refill()
        word = self._words[self._position]
        self._position += 1
        return word

    def uniform(self, n: int) -> int:
        """A uniform integer in ``0 .. n-1``, for 1 <= n <= 2^32, with no modulo bias.

        Draws ``u`` until ``u < 2^32 - (2^32 mod n)`` and returns ``u mod n``;
        ``uniform(1)`` still draws once.
        """
        if type(n) is not int or not 1 <= n <= _TWO_32:
            raise ValueError(f"uniform(n) needs a whole number n from 1 to 2^32; got {n!r}.")
        limit = _TWO_32 - _TWO_32 % n
        while True:
            # next_u32, inlined: this loop is most of the time of a deal.
            if self._position == len(self._words):
                self._refill()
            u = self._words[self._position]
            self._position += 1
            if u < limit:
                return u % n


def fresh_deck(jokers: bool = False) -> list[int]:
    """The fresh deck in DEAL.md's order: 3C 3D 3H 3S 4C ... 2S, then BJ RJ with jokers."""
    return list(range(DECK_WITH_JOKERS_SIZE if jokers else STANDARD_DECK_SIZE))


def shuffle(deck: Sequence[_Item], stream: RandomStream) -> list[_Item]:
    """Fisher–Yates: for i from len-1 down to 1, swap positions i and ``uniform(i + 1)``."""
    cards = list(deck)
    for i in range(len(cards) - 1, 0, -1):
        j = stream.uniform(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def cut_middle(deck: Sequence[int], stream: RandomStream) -> list[int]:
    """Cut near the middle: ``c = len//2 - 4 + uniform(9)``; deck becomes deck[c:] + deck[:c]."""
    if len(deck) < 8:
        raise ValueError(f"A deck of {len(deck)} cards is too short for a middle cut.")
    c = len(deck) // 2 - 4 + stream.uniform(9)
    return [*deck[c:], *deck[:c]]


def cut_thirds(deck: Sequence[int], stream: RandomStream) -> list[int]:
    """Cut in rough thirds and restack them so that no third stays where it was.

    ``t = len//3``; ``a = t - 3 + uniform(7)``; ``b = t - 3 + uniform(7)``;
    P0 = deck[:a], P1 = deck[a:a+b], P2 = deck[a+b:]; then ``uniform(2)``
    picks P1+P2+P0 (0) or P2+P0+P1 (1).
    """
    t = len(deck) // 3
    if t < 3 or 2 * t + 6 > len(deck):
        raise ValueError(f"A deck of {len(deck)} cards is too short for a cut in thirds.")
    a = t - 3 + stream.uniform(7)
    b = t - 3 + stream.uniform(7)
    p0, p1, p2 = deck[:a], deck[a : a + b], deck[a + b :]
    if stream.uniform(2) == 0:
        return [*p1, *p2, *p0]
    return [*p2, *p0, *p1]


def shuffled_deck(secret: bytes, jokers: bool = False) -> list[int]:
    """The fresh deck after shuffle, cut_middle, shuffle, cut_thirds, shuffle, from one stream."""
    stream = RandomStream(secret)
    deck = shuffle(fresh_deck(jokers), stream)
    deck = cut_middle(deck, stream)
    deck = shuffle(deck, stream)
    deck = cut_thirds(deck, stream)
    return shuffle(deck, stream)


@dataclass(frozen=True, slots=True)
class Deal:
    """One dealt round.

    ``hands[seat]`` holds the cards of that seat in the order they were dealt;
    ``set_aside`` the cards left over with a hand size limit, in deck order.
    """

    fingerprint: str
    hands: tuple[tuple[int, ...], ...]
    set_aside: tuple[int, ...]


def _checked_players(players: int, deck_size: int) -> None:
    if players < MIN_PLAYERS:
        raise ValueError(f"A deal needs at least {MIN_PLAYERS} players; got {players}.")
    if players > deck_size:
        raise ValueError(
            f"A deck of {deck_size} cards can serve at most {deck_size} players; got {players}."
        )


def _checked_order(deal_order: Sequence[int], deck_size: int) -> list[int]:
    order = list(deal_order)
    _checked_players(len(order), deck_size)
    is_permutation = all(
        isinstance(seat, int) and not isinstance(seat, bool) for seat in order
    ) and sorted(order) == list(range(len(order)))
    if not is_permutation:
        raise ValueError(
            f"The deal order must name each seat from 0 to {len(order) - 1} exactly once; "
            f"got {order}."
        )
    return order


def hand_size_for(deck_size: int, players: int, discard: bool) -> int | None:
    """The hand size limit of DEAL.md: ``deck_size // players`` when extras are set aside.

    ``discard`` is true when the option ``deal_extras`` is ``discard``; otherwise
    every card is dealt and there is no limit (``None``).
    """
    _checked_players(players, deck_size)
    return deck_size // players if discard else None


def deal(
    secret: bytes,
    deal_order: Sequence[int],
    *,
    jokers: bool = False,
    hand_size: int | None = None,
) -> Deal:
    """Deal one round from ``secret``.

    ``deal_order`` is a permutation of the seats ``0 .. n-1``, first to receive
    first. Cards go one at a time from deck position 0 to the seats of
    ``deal_order``, round and round, until the deck is empty or, with
    ``hand_size``, until every seat holds that many; the rest are set aside.
    """
    key = _checked_secret(secret)
    deck_size = DECK_WITH_JOKERS_SIZE if jokers else STANDARD_DECK_SIZE
    order = _checked_order(deal_order, deck_size)
    players = len(order)
    if hand_size is None:
        dealt = deck_size
    else:
        if isinstance(hand_size, bool) or not isinstance(hand_size, int) or hand_size < 1:
            raise ValueError(
                f"A hand size must be a whole number of at least 1; got {hand_size!r}."
            )
        if hand_size * players > deck_size:
            raise ValueError(
                f"A hand size of {hand_size} is too large for {players} players: the deck has "
                f"{deck_size} cards, enough for at most {deck_size // players} each."
            )
        dealt = hand_size * players
    deck = shuffled_deck(key, jokers)
    hands: list[list[int]] = [[] for _ in range(players)]
    for position in range(dealt):
        hands[order[position % players]].append(deck[position])
    return Deal(
        fingerprint=_fingerprint(key),
        hands=tuple(tuple(hand) for hand in hands),
        set_aside=tuple(deck[dealt:]),
    )


@dataclass(frozen=True, slots=True)
class SeatedDeal:
    """One dealt round, by seat.

    ``hands[seat]`` holds the cards of that seat in the order they were dealt
    (card lists, not masks: a mask loses the dealt order), for the seats of the
    deal order only; ``set_aside`` the cards left over, in deck order.
    :meth:`masks` gives the hands as card bitmasks for a table's seats.
    """

    hands: Mapping[int, tuple[int, ...]]
    set_aside: tuple[int, ...]

    def masks(self, seats: int) -> tuple[int, ...]:
        """The hands as bitmasks (bit ``c`` = card ``c``) for seats ``0 .. seats-1``.

        A seat that was not dealt to has the empty mask.
        """
        return tuple(to_mask(self.hands.get(seat, ())) for seat in range(seats))

    @property
    def set_aside_mask(self) -> int:
        """The set-aside cards as a bitmask."""
        return to_mask(self.set_aside)


def seated(
    hands: Sequence[Sequence[int]], set_aside: Sequence[int], deal_order: Sequence[int]
) -> SeatedDeal:
    """A deal by position (``hands[k]`` = what position ``k`` received) turned into one by seat.

    Position ``k`` is the seat ``deal_order[k]``: the dealer deals over positions
    ``0 .. n-1`` and knows nothing of the table's seat numbers.
    """
    return SeatedDeal(
        hands={seat: tuple(hands[position]) for position, seat in enumerate(deal_order)},
        set_aside=tuple(set_aside),
    )


def hands_by_seat(
    secret: bytes,
    deal_order: Sequence[int],
    *,
    jokers: bool = False,
    hand_size: int | None = None,
) -> SeatedDeal:
    """Deal one round from ``secret`` to the seats of ``deal_order``, first to receive first.

    The seats may be any seat numbers (a table's occupied seats): the deal runs
    over positions ``0 .. n-1`` as :func:`deal` does, and position ``k``'s hand
    goes to seat ``deal_order[k]``.
    """
    order = list(deal_order)
    dealt = deal(secret, range(len(order)), jokers=jokers, hand_size=hand_size)
    return seated(dealt.hands, dealt.set_aside, order)
