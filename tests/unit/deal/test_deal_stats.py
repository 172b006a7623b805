"""Is the deal fair? Chi-square tests over many secrets.

The secrets are fixed (``sha256(label || i)``), so each test gives the same
answer on every run; the thresholds make the chance that a correct dealer fails
on the chosen secrets tiny. Each test rejects only when a chi-square tail
probability is below ``ALPHA = 1e-8`` (and the tests here look at fewer than 30
tails in all), so a correct implementation fails with probability below 3e-7.
A real bias (a modulo bias, an off-by-one in Fisher–Yates, a cut that leaves a
third in place, a card stuck near its place) gives tail probabilities far below
that with these sample sizes.

The tail probabilities come from :func:`chi2_sf`, the exact chi-square survival
function for whole degrees of freedom (closed forms of the regularized upper
incomplete gamma function), itself checked below against known values; no scipy.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import pytest

from president import deal as deal_mod

ALPHA = 1e-8
DECKS = 20_000
JOKER_DECKS = 5_000
DRAWS = 120_000


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X chi-square with ``df`` degrees of freedom (whole ``df`` >= 1), exact.

    Q(a, y), y = x/2, a = df/2: for whole a, Q(a, y) = e^-y sum_{i<a} y^i / i!; for
    a = n + 1/2, Q(a, y) = erfc(sqrt y) + e^-y sum_{i=1..n} y^(i-1/2) / Gamma(i + 1/2).
    The sums are taken in log space so that df in the thousands does not overflow.
    """
    if x <= 0:
        return 1.0
    y = x / 2
    if df % 2 == 0:
        logs = [-y + i * math.log(y) - math.lgamma(i + 1) for i in range(df // 2)]
        head = 0.0
    else:
        logs = [-y + (i - 0.5) * math.log(y) - math.lgamma(i + 0.5) for i in range(1, df // 2 + 1)]
        head = math.erfc(math.sqrt(y))
    if not logs:
        return head
    top = max(logs)
    return head + math.exp(top) * math.fsum(math.exp(value - top) for value in logs)


def chi2_two_sided_ok(statistic: float, df: int) -> tuple[bool, float, float]:
    """(neither tail below ALPHA, upper tail, lower tail)."""
    upper = chi2_sf(statistic, df)
    lower = 1.0 - upper
    return upper > ALPHA and lower > ALPHA, upper, lower


def pearson(observed: Sequence[int], expected: Sequence[float]) -> float:
    return math.fsum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True))


def secrets(label: bytes, count: int) -> list[bytes]:
    return [hashlib.sha256(label + i.to_bytes(4, "big")).digest() for i in range(count)]


@pytest.fixture(scope="module")
def decks() -> list[list[int]]:
    return [deal_mod.shuffled_deck(secret) for secret in secrets(b"president-deal stats ", DECKS)]


# ---------------------------------------------------------------- chi2_sf itself


def test_chi2_sf_against_known_values() -> None:
    # df 1 and 2 have elementary closed forms.
    for x in (0.5, 3.0, 10.0, 40.0):
        assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-12)
        assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
    # Upper 0.1% and 99.9% points from the standard tables (NIST/SEMATECH e-Handbook, 1.3.6.7.4).
    assert chi2_sf(29.588, 10) == pytest.approx(0.001, rel=1e-3)
    assert chi2_sf(86.661, 50) == pytest.approx(0.001, rel=1e-3)
    assert chi2_sf(149.449, 100) == pytest.approx(0.001, rel=1e-3)
    assert chi2_sf(61.918, 100) == pytest.approx(0.999, rel=1e-5)
    assert chi2_sf(1.0, 100) == pytest.approx(1.0)
    # Far in the tail for many degrees of freedom: the Wilson–Hilferty cube-root
    # normal approximation is accurate there, so the two must be close.
    from statistics import NormalDist

    for df in (51, 2601):
        for p in (1e-3, 1e-6, 1e-8):
            z = NormalDist().inv_cdf(1 - p)
            h = 2 / (9 * df)
            x = df * (1 - h + z * math.sqrt(h)) ** 3
            assert chi2_sf(x, df) == pytest.approx(p, rel=0.25 if df < 100 else 0.05)


# ---------------------------------------------------------------- the deck


def test_every_card_lands_in_every_position_evenly(decks: list[list[int]]) -> None:
    """The whole card-by-position table of the 20,000 decks.

    Each deck adds a permutation matrix, so the table's rows and columns are
    fixed. For a uniform permutation of n cards the cell indicators have
    covariance (1/(n-1)) Q⊗Q, Q = I - J/n (a projection of rank n-1), hence
    Pearson's S = sum (O-E)^2/E with E = decks/n satisfies
    S * (n-1)/n ~ chi-square with (n-1)^2 degrees of freedom.
    """
    n = 52
    table = [[0] * n for _ in range(n)]
    for deck in decks:
        for position, card in enumerate(deck):
            table[card][position] += 1
    expected = DECKS / n
    statistic = math.fsum((o - expected) ** 2 / expected for row in table for o in row)
    ok, upper, lower = chi2_two_sided_ok(statistic * (n - 1) / n, (n - 1) ** 2)
    assert ok, (statistic, upper, lower)


@pytest.mark.parametrize("card", [0, 1, 23, 47, 51])  # 3C 3D 8S AS 2S
def test_a_card_lands_in_every_position_evenly(decks: list[list[int]], card: int) -> None:
    counts = [0] * 52
    for deck in decks:
        counts[deck.index(card)] += 1
    ok, upper, lower = chi2_two_sided_ok(pearson(counts, [DECKS / 52] * 52), 51)
    assert ok, (counts, upper, lower)


def test_neighbours_are_independent(decks: list[list[int]]) -> None:
    """The ordered pair of the two top cards: 52 * 51 outcomes, each 1/2652."""
    counts: dict[tuple[int, int], int] = {}
    for deck in decks:
        counts[deck[0], deck[1]] = counts.get((deck[0], deck[1]), 0) + 1
    cells = 52 * 51
    observed = [counts.get((a, b), 0) for a in range(52) for b in range(52) if a != b]
    ok, upper, lower = chi2_two_sided_ok(pearson(observed, [DECKS / cells] * cells), cells - 1)
    assert ok, (upper, lower)


def test_who_holds_the_3_of_clubs_with_5_players(decks: list[list[int]]) -> None:
    """Seat holding 3C, deal order 0..4: 11/52 for seats 0 and 1, 10/52 for the others."""
    counts = [0] * 5
    for deck in decks:
        counts[deck.index(0) % 5] += 1
    expected = [DECKS * size / 52 for size in (11, 11, 10, 10, 10)]
    ok, upper, lower = chi2_two_sided_ok(pearson(counts, expected), 4)
    assert ok, (counts, upper, lower)


def test_the_jokers_land_in_every_position_evenly() -> None:
    counts = {52: [0] * 54, 53: [0] * 54}
    for secret in secrets(b"president-deal joker stats ", JOKER_DECKS):
        deck = deal_mod.shuffled_deck(secret, jokers=True)
        for joker, row in counts.items():
            row[deck.index(joker)] += 1
    for row in counts.values():
        ok, upper, lower = chi2_two_sided_ok(pearson(row, [JOKER_DECKS / 54] * 54), 53)
        assert ok, (row, upper, lower)


def test_a_single_shuffle_is_uniform() -> None:
    """Fisher–Yates alone from the fresh deck: the step most likely to hide an off-by-one."""
    n = 52
    table = [[0] * n for _ in range(n)]
    for secret in secrets(b"president-deal shuffle stats ", DECKS):
        deck = deal_mod.shuffle(deal_mod.fresh_deck(), deal_mod.RandomStream(secret))
        for position, card in enumerate(deck):
            table[card][position] += 1
    expected = DECKS / n
    statistic = math.fsum((o - expected) ** 2 / expected for row in table for o in row)
    ok, upper, lower = chi2_two_sided_ok(statistic * (n - 1) / n, (n - 1) ** 2)
    assert ok, (statistic, upper, lower)
    assert all(table[card][card] > 0 for card in range(n))  # not Sattolo's cyclic shuffle


# ---------------------------------------------------------------- uniform(n)


@pytest.mark.parametrize("n", [2, 3, 7, 9, 52])
def test_uniform_small_n_is_unbiased(n: int) -> None:
    stream = deal_mod.RandomStream(hashlib.sha256(b"uniform %d" % n).digest())
    counts = [0] * n
    for _ in range(DRAWS):
        counts[stream.uniform(n)] += 1
    ok, upper, lower = chi2_two_sided_ok(pearson(counts, [DRAWS / n] * n), n - 1)
    assert ok, (counts, upper, lower)


@pytest.mark.parametrize(
    ("n", "buckets"),
    [
        # 2^32 mod n = 2^30: plain u mod n would put half the draws in the first third.
        (3 * 2**30, 3),
        # 2^32 mod n = 2^31 - 1: plain u mod n would favour the lower half 3 to 1.
        (2**31 + 1, 2),
        (10**9, 4),
        (2**32, 8),
    ],
)
def test_uniform_large_n_has_no_modulo_bias(n: int, buckets: int) -> None:
    stream = deal_mod.RandomStream(hashlib.sha256(b"uniform %d" % n).digest())
    counts = [0] * buckets
    for _ in range(DRAWS):
        counts[stream.uniform(n) * buckets // n] += 1
    # Bucket b holds the values v with v * buckets // n == b: from ceil(b n / B) up to
    # ceil((b+1) n / B), excluded.
    starts = [-(-b * n // buckets) for b in range(buckets + 1)]  # ceil(b * n / buckets)
    sizes = [starts[b + 1] - starts[b] for b in range(buckets)]
    expected = [DRAWS * size / n for size in sizes]
    ok, upper, lower = chi2_two_sided_ok(pearson(counts, expected), buckets - 1)
    assert ok, (counts, upper, lower)

    # Each word is rejected with probability p = (2^32 mod n) / 2^32, independently, so
    # the rejections before DRAWS acceptances are negative binomial: mean D p/q,
    # variance D p/q^2 (q = 1 - p); with these D the normal approximation is close.
    rejected = stream.words_read - DRAWS
    p = (2**32 % n) / 2**32
    if p == 0:
        assert rejected == 0
    else:
        q = 1 - p
        z = (rejected - DRAWS * p / q) / math.sqrt(DRAWS * p / q**2)
        assert abs(z) < 6.0, (rejected, z)  # |z| >= 6 has probability 2e-9
