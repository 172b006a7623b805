"""The deal's rules: errors people can read, and properties every deal has."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from president import deal as deal_mod
from president.deal import RandomStream, deal, hands_by_seat

SECRET = bytes(range(32))


class ScriptedBlocks(RandomStream):
    """A stream whose blocks hold given uint32 values: to watch uniform() reject and accept."""

    def __init__(self, words: list[int]) -> None:
        super().__init__(SECRET)
        self._script = words + [0] * (-len(words) % 8)

    def _refill(self) -> None:
        start = 8 * self._next_block
        self._words = tuple(self._script[start : start + 8])
        self._next_block += 1
        self._position = 0


class ScriptedUniform(RandomStream):
    """A stream whose uniform() results are given, to drive the cuts through every case."""

    def __init__(self, values: Iterable[int]) -> None:
        super().__init__(SECRET)
        self._values = iter(values)

    def uniform(self, n: int) -> int:
        value = next(self._values)
        assert 0 <= value < n
        return value


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("size", [0, 16, 31, 33, 64])
def test_a_secret_must_be_32_bytes(size: int) -> None:
    message = f"The deal's secret must be exactly 32 bytes; this one has {size}."
    secret = bytes(size)
    for call in (
        lambda: deal_mod.deal(secret, [0, 1, 2, 3]),
        lambda: deal_mod.fingerprint(secret),
        lambda: deal_mod.verify_fingerprint(secret, "00"),
        lambda: RandomStream(secret),
        lambda: deal_mod.shuffled_deck(secret),
        lambda: deal_mod.stream_block(secret, 0),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value) == message


def test_a_secret_must_be_bytes() -> None:
    with pytest.raises(TypeError, match=r"must be bytes, not str \(for a hex text, use bytes"):
        deal_mod.deal(SECRET.hex(), [0, 1])  # type: ignore[arg-type]


def test_bytearray_and_memoryview_secrets_are_the_same_secret() -> None:
    expected = deal_mod.deal(SECRET, [0, 1, 2, 3])
    assert deal_mod.deal(bytearray(SECRET), [0, 1, 2, 3]) == expected
    assert deal_mod.deal(memoryview(SECRET), [0, 1, 2, 3]) == expected


def _not_a_permutation(last: int, order: str) -> str:
    return f"The deal order must name each seat from 0 to {last} exactly once; got {order}."


@pytest.mark.parametrize(
    ("order", "message"),
    [
        ([0, 1, 1, 3], _not_a_permutation(3, "[0, 1, 1, 3]")),
        ([1, 2, 3, 4], _not_a_permutation(3, "[1, 2, 3, 4]")),
        ([0, 2], _not_a_permutation(1, "[0, 2]")),
        ([-1, 0, 1], _not_a_permutation(2, "[-1, 0, 1]")),
        ([True, 0], _not_a_permutation(1, "[True, 0]")),
        ([0, 1.0], _not_a_permutation(1, "[0, 1.0]")),
        ([0], "A deal needs at least 2 players; got 1."),
        ([], "A deal needs at least 2 players; got 0."),
        (list(range(53)), "A deck of 52 cards can serve at most 52 players; got 53."),
    ],
)
def test_a_bad_deal_order_says_what_is_wrong(order: list[int], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        deal_mod.deal(SECRET, order)
    assert str(caught.value) == message


def test_jokers_serve_up_to_54_players() -> None:
    dealt = deal_mod.deal(SECRET, list(range(54)), jokers=True)
    assert all(len(hand) == 1 for hand in dealt.hands)
    with pytest.raises(ValueError, match="A deck of 54 cards can serve at most 54 players; got 55"):
        deal_mod.deal(SECRET, list(range(55)), jokers=True)


@pytest.mark.parametrize(
    ("players", "jokers", "hand_size", "message"),
    [
        (4, False, 14, "A hand size of 14 is too large for 4 players: the deck has 52 cards, "
                       "enough for at most 13 each."),
        (5, True, 11, "A hand size of 11 is too large for 5 players: the deck has 54 cards, "
                      "enough for at most 10 each."),
        (4, False, 0, "A hand size must be a whole number of at least 1; got 0."),
        (4, False, -3, "A hand size must be a whole number of at least 1; got -3."),
        (4, False, 2.5, "A hand size must be a whole number of at least 1; got 2.5."),
    ],
)  # fmt: skip
def test_a_bad_hand_size_says_what_is_wrong(
    players: int, jokers: bool, hand_size: int, message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        deal_mod.deal(SECRET, list(range(players)), jokers=jokers, hand_size=hand_size)
    assert str(caught.value) == message


@pytest.mark.parametrize("n", [0, -1, 2**32 + 1, 2**40, 2.0, True, "3"])
def test_uniform_refuses_n_outside_1_to_2_32(n: object) -> None:
    stream = RandomStream(SECRET)
    with pytest.raises(ValueError, match=r"uniform\(n\) needs a whole number n from 1 to 2\^32"):
        stream.uniform(n)  # type: ignore[arg-type]
    assert stream.words_read == 0


def test_cuts_refuse_decks_too_short() -> None:
    with pytest.raises(ValueError, match="A deck of 7 cards is too short for a middle cut"):
        deal_mod.cut_middle(list(range(7)), RandomStream(SECRET))
    with pytest.raises(ValueError, match="A deck of 15 cards is too short for a cut in thirds"):
        deal_mod.cut_thirds(list(range(15)), RandomStream(SECRET))
    deal_mod.cut_middle(list(range(8)), RandomStream(SECRET))
    deal_mod.cut_thirds(list(range(14)), RandomStream(SECRET))
    deal_mod.cut_thirds(list(range(16)), RandomStream(SECRET))


def test_stream_block_refuses_a_block_number_out_of_uint64() -> None:
    with pytest.raises(ValueError, match="A block number must be from 0 to 2"):
        deal_mod.stream_block(SECRET, -1)
    with pytest.raises(ValueError, match="A block number must be from 0 to 2"):
        deal_mod.stream_block(SECRET, 2**64)


# ---------------------------------------------------------------- the pieces


def test_fingerprint_and_verify() -> None:
    fingerprint = deal_mod.fingerprint(SECRET)
    assert fingerprint == "d44b6082c4a07621beb646bc263416d507194c5cbe936ee6a514b85243cd9c07"
    assert deal_mod.verify_fingerprint(SECRET, fingerprint)
    assert not deal_mod.verify_fingerprint(SECRET, fingerprint.upper())
    assert not deal_mod.verify_fingerprint(SECRET, fingerprint[:-1] + "8")
    assert not deal_mod.verify_fingerprint(SECRET, "")
    assert not deal_mod.verify_fingerprint(SECRET, "é" * 64)
    assert not deal_mod.verify_fingerprint(bytes(32), fingerprint)


def test_new_secret_is_32_fresh_bytes() -> None:
    secrets = {deal_mod.new_secret() for _ in range(100)}
    assert len(secrets) == 100
    assert all(len(secret) == 32 for secret in secrets)


def test_a_deal_is_frozen() -> None:
    dealt = deal_mod.deal(SECRET, [0, 1, 2, 3])
    with pytest.raises(dataclasses.FrozenInstanceError):
        dealt.fingerprint = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("deck_size", "players", "discard", "expected"),
    [
        (52, 4, False, None),
        (52, 4, True, 13),
        (52, 5, True, 10),
        (54, 7, True, 7),
        (54, 8, False, None),
    ],
)
def test_hand_size_for(deck_size: int, players: int, discard: bool, expected: int | None) -> None:
    assert deal_mod.hand_size_for(deck_size, players, discard) == expected


def test_hand_size_for_refuses_impossible_player_counts() -> None:
    with pytest.raises(ValueError, match=re.escape("A deal needs at least 2 players; got 1.")):
        deal_mod.hand_size_for(52, 1, True)
    with pytest.raises(ValueError, match=re.escape("can serve at most 52 players; got 60.")):
        deal_mod.hand_size_for(52, 60, False)


def test_uniform_rejects_words_at_or_over_the_limit() -> None:
    n = 3 * 2**30
    limit = 2**32 - 2**30  # 2^32 - (2^32 mod n): a quarter of all words are rejected
    stream = ScriptedBlocks([2**32 - 1, limit, limit - 1, 5, limit + 7, 2**30 + 1])
    assert stream.uniform(n) == limit - 1
    assert stream.words_read == 3
    assert stream.uniform(n) == 5
    assert stream.words_read == 4
    assert stream.uniform(n) == 2**30 + 1
    assert stream.words_read == 6


def test_uniform_takes_the_remainder() -> None:
    stream = ScriptedBlocks([100, 2**32 - 1, 2**32 - 2, 2**32 - 5])
    assert stream.uniform(7) == 100 % 7
    # 2^32 mod 7 = 4, so the limit is 2^32 - 4: the two top words are rejected.
    assert stream.uniform(7) == (2**32 - 5) % 7
    assert stream.words_read == 4


def test_uniform_1_draws_once_and_2_32_never_rejects() -> None:
    first_word = RandomStream(SECRET).next_u32()
    stream = RandomStream(SECRET)
    assert stream.uniform(1) == 0
    assert stream.words_read == 1
    stream = RandomStream(SECRET)
    assert stream.uniform(2**32) == first_word
    assert stream.words_read == 1
    stream = ScriptedBlocks([2**32 - 1])
    assert stream.uniform(2**32) == 2**32 - 1


def test_the_stream_crosses_blocks_in_order() -> None:
    stream = RandomStream(SECRET)
    words = [stream.next_u32() for _ in range(24)]
    for k in range(3):
        block = deal_mod.stream_block(SECRET, k)
        assert words[8 * k : 8 * k + 8] == [
            int.from_bytes(block[i : i + 4], "big") for i in range(0, 32, 4)
        ]


def test_cut_middle_covers_exactly_nine_cuts() -> None:
    deck = list(range(52))
    cuts = {deal_mod.cut_middle(deck, ScriptedUniform([r]))[0] for r in range(9)}
    assert cuts == set(range(22, 31))  # c = 26 - 4 .. 26 + 4: the new top card is deck[c]


def test_cut_thirds_never_leaves_a_third_in_place() -> None:
    for size in (52, 54):
        deck = list(range(size))
        t = size // 3
        for ra in range(7):
            for rb in range(7):
                for r in range(2):
                    cut = deal_mod.cut_thirds(deck, ScriptedUniform([ra, rb, r]))
                    a, b = t - 3 + ra, t - 3 + rb
                    p0, p1, p2 = deck[:a], deck[a : a + b], deck[a + b :]
                    assert cut == (p1 + p2 + p0 if r == 0 else p2 + p0 + p1)
                    assert sorted(cut) == deck
                    assert cut[:a] != p0
                    assert cut[a : a + b] != p1
                    assert cut[a + b :] != p2


def test_shuffle_draws_uniform_of_i_plus_1_from_the_top_down() -> None:
    class Recording(RandomStream):
        def __init__(self) -> None:
            super().__init__(SECRET)
            self.asked: list[int] = []

        def uniform(self, n: int) -> int:
            self.asked.append(n)
            return 0

    stream = Recording()
    shuffled = deal_mod.shuffle([10, 11, 12, 13], stream)
    assert stream.asked == [4, 3, 2]
    # j = 0 every time: swap 3<->0, then 2<->0, then 1<->0
    assert shuffled == [11, 12, 13, 10]


# ---------------------------------------------------------------- properties


@st.composite
def deals(draw: st.DrawFn) -> tuple[bytes, list[int], bool, int | None]:
    secret = draw(st.binary(min_size=32, max_size=32))
    jokers = draw(st.booleans())
    deck_size = 54 if jokers else 52
    players = draw(st.one_of(st.integers(2, 8), st.integers(2, deck_size)))
    order = draw(st.permutations(range(players)))
    hand_size = draw(st.none() | st.integers(1, deck_size // players))
    return secret, list(order), jokers, hand_size


@settings(max_examples=200, deadline=None)
@given(deals())
def test_every_deal_is_a_partition_of_the_deck(
    case: tuple[bytes, list[int], bool, int | None],
) -> None:
    secret, order, jokers, hand_size = case
    dealt = deal_mod.deal(secret, order, jokers=jokers, hand_size=hand_size)
    deck_size = 54 if jokers else 52
    everything = [card for hand in dealt.hands for card in hand] + list(dealt.set_aside)
    assert sorted(everything) == list(range(deck_size))
    assert len(dealt.hands) == len(order)
    assert dealt.fingerprint == deal_mod.fingerprint(secret)


@settings(max_examples=200, deadline=None)
@given(deals())
def test_hand_sizes(case: tuple[bytes, list[int], bool, int | None]) -> None:
    secret, order, jokers, hand_size = case
    dealt = deal_mod.deal(secret, order, jokers=jokers, hand_size=hand_size)
    deck_size = 54 if jokers else 52
    players = len(order)
    sizes = [len(hand) for hand in dealt.hands]
    if hand_size is None:
        assert dealt.set_aside == ()
        assert max(sizes) - min(sizes) <= 1
        extras = deck_size % players
        # The first seats of deal_order get the extras.
        for turn, seat in enumerate(order):
            assert sizes[seat] == deck_size // players + (1 if turn < extras else 0)
    else:
        assert sizes == [hand_size] * players
        assert len(dealt.set_aside) == deck_size - hand_size * players


@settings(max_examples=200, deadline=None)
@given(deals())
def test_cards_go_round_the_deal_order_from_the_top_of_the_deck(
    case: tuple[bytes, list[int], bool, int | None],
) -> None:
    secret, order, jokers, hand_size = case
    dealt = deal_mod.deal(secret, order, jokers=jokers, hand_size=hand_size)
    deck = deal_mod.shuffled_deck(secret, jokers)
    players = len(order)
    dealt_count = len(deck) - len(dealt.set_aside)
    for position in range(dealt_count):
        assert dealt.hands[order[position % players]][position // players] == deck[position]
    assert list(dealt.set_aside) == deck[dealt_count:]
    # A hand size limit only stops the deal early: hands are prefixes of the full deal.
    full = deal_mod.deal(secret, order, jokers=jokers)
    for limited, whole in zip(dealt.hands, full.hands, strict=True):
        assert whole[: len(limited)] == limited


@settings(max_examples=100, deadline=None)
@given(deals())
def test_the_deal_order_only_says_who_gets_which_hand(
    case: tuple[bytes, list[int], bool, int | None],
) -> None:
    secret, order, jokers, hand_size = case
    dealt = deal_mod.deal(secret, order, jokers=jokers, hand_size=hand_size)
    in_seat_order = deal_mod.deal(secret, range(len(order)), jokers=jokers, hand_size=hand_size)
    for turn, seat in enumerate(order):
        assert dealt.hands[seat] == in_seat_order.hands[turn]
    assert dealt.set_aside == in_seat_order.set_aside


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=32, max_size=32))
def test_the_same_secret_deals_the_same_cards(secret: bytes) -> None:
    assert deal_mod.deal(secret, [0, 1, 2]) == deal_mod.deal(secret, (0, 1, 2))
    assert deal_mod.shuffled_deck(secret) == deal_mod.shuffled_deck(secret)


def test_hands_by_seat_gives_position_k_to_seat_k_of_the_order() -> None:
    secret = bytes(range(32))
    order = [5, 0, 3]
    by_position = deal(secret, range(3), hand_size=10)
    seated = hands_by_seat(secret, order, hand_size=10)
    assert seated.hands == {
        5: by_position.hands[0],
        0: by_position.hands[1],
        3: by_position.hands[2],
    }
    assert seated.set_aside == by_position.set_aside
    masks = seated.masks(6)
    assert masks[1] == masks[2] == masks[4] == 0
    assert masks[5] == sum(1 << card for card in by_position.hands[0])
    assert seated.set_aside_mask == sum(1 << card for card in by_position.set_aside)


def test_hands_by_seat_over_seats_0_to_n_is_the_deal_in_that_order() -> None:
    secret = bytes(range(32))
    order = [2, 0, 3, 1]
    assert hands_by_seat(secret, order).hands == dict(enumerate(deal(secret, order).hands))
