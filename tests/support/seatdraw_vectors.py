"""SEAT_DRAW.md's test vectors and random cases, made by the Python implementation.

``pinned()`` is the vector set committed as ``web/test/seatdraw_vectors.json``: each
method, uneven counts, a lone entrant, account ids whose UTF-8 and UTF-16 orders
differ, a swiss round with repeats to avoid (by the search, and by the swaps
after the search gives up), one where repeats cannot be avoided, and tampered
seatings (of the vectors up to 40 entrants) with the reason each must get.
Both the Python and the Node tests check every vector.
``python -m tests.support.seatdraw_vectors`` rewrites the file; do so only for
a new version tag, since the vectors pin the draw.
``random_cases`` makes random requests for the Node test to agree with.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
import sys
from pathlib import Path
from typing import Any

from president.tournament.draw import (
    METHODS,
    DrawEntrant,
    DrawRequest,
    Seating,
    check_draw,
    draw,
    fingerprint,
    input_digest,
)

PINNED_FILE = Path(__file__).resolve().parents[2] / "web" / "test" / "seatdraw_vectors.json"
DEAL_MD_SECRET = bytes(range(32))


def _secret(name: str) -> bytes:
    return random.Random(f"seatdraw/{name}").randbytes(32)


def _entrants(n: int, seed: str, points: int = 0, ratings: bool = True) -> tuple[DrawEntrant, ...]:
    rng = random.Random(seed)
    return tuple(
        DrawEntrant(
            account_id=f"acct-{rng.randrange(16**6):06x}-{i}",
            points=rng.randint(0, points) if points else 0,
            rating_milli=rng.randint(800_000, 2_400_000) if ratings else 1_500_000,
        )
        for i in range(n)
    )


def _co_seated(seatings: list[Seating]) -> frozenset[frozenset[str]]:
    return frozenset(
        frozenset(pair)
        for seating in seatings
        for table in seating
        for pair in itertools.combinations([p for p in table if p is not None], 2)
    )


def _swiss_rounds(name: str, entrants: tuple[DrawEntrant, ...], rounds: int) -> DrawRequest:
    """Round ``rounds + 1`` of a swiss tournament whose earlier rounds were drawn at random."""
    earlier = [
        draw(_secret(f"{name}/{r}"), DrawRequest(name, r, "random", 4, entrants))
        for r in range(1, rounds + 1)
    ]
    return DrawRequest(name, rounds + 1, "swiss", 4, entrants, _co_seated(earlier))


def requests() -> list[tuple[str, bytes, DrawRequest]]:
    """The pinned vectors' names, secrets and requests."""
    bottom = tuple(DrawEntrant(f"s{i:02d}", 20 - i, 1_000_000 + i) for i in range(20))
    clique = frozenset(
        frozenset(p) for p in itertools.combinations([e.account_id for e in bottom[-5:]], 2)
    )
    stuck = tuple(DrawEntrant(f"p{i}", i % 3, 0) for i in range(8))
    everyone = frozenset(
        frozenset(p) for p in itertools.combinations([e.account_id for e in stuck], 2)
    )
    unicode_ids = ("z", "Z", "é", "ä", "\uff5e", "\U0001f600", "東京", "a b")
    # The top three by points met before: the plain cut in score order would seat them again.
    twelve = tuple(
        dataclasses.replace(e, points=points)
        for e, points in zip(
            _entrants(12, "swiss-12"), (6, 5, 4, 3, 3, 2, 2, 1, 1, 0, 0, 0), strict=True
        )
    )
    top_met = frozenset(
        frozenset(p) for p in itertools.combinations([e.account_id for e in twelve[:3]], 2)
    )
    unicode = tuple(DrawEntrant(a, 0, 0) for a in unicode_ids)
    eight, nine = _entrants(8, "a"), _entrants(9, "f", ratings=False)
    negative = tuple(DrawEntrant(f"n{i}", -i, -(3**i) * 1000) for i in range(7))
    cases = [
        ("deal-md-secret-random-8x4", DEAL_MD_SECRET, DrawRequest("spring", 1, "random", 4, eight)),
        ("random-10x4-uneven", None, DrawRequest("t-10", 1, "random", 4, _entrants(10, "b"))),
        ("random-1001x4", None, DrawRequest("club-friday", 1, "random", 4, _entrants(1001, "c"))),
        ("random-lone-entrant", None, DrawRequest("t-1", 1, "random", 4, _entrants(1, "d"))),
        ("random-unicode-ids", None, DrawRequest("tournoi-été", 7, "random", 3, unicode)),
        ("rating-bands-13x4", None, DrawRequest("t-13", 1, "rating_bands", 4, _entrants(13, "e"))),
        ("rating-bands-ties-9x3", None, DrawRequest("t-9", 2, "rating_bands", 3, nine)),
        ("rating-bands-negative-7x5", None, DrawRequest("t-7", 1, "rating_bands", 5, negative)),
        ("swiss-round-1-8x4", None, DrawRequest("t-s1", 1, "swiss", 4, _entrants(8, "g"))),
        ("swiss-top-met-12x4", None, DrawRequest("t-s12", 2, "swiss", 4, twelve, top_met)),
        ("swiss-round-4-30x4", None, _swiss_rounds("t-s30", _entrants(30, "h", points=6), 3)),
        ("swiss-round-3-101x4", None, _swiss_rounds("t-s101", _entrants(101, "i", points=4), 2)),
        ("swiss-bottom-clique-20x4", None, DrawRequest("t-clique", 5, "swiss", 4, bottom, clique)),
        ("swiss-unavoidable-8x4", None, DrawRequest("t-stuck", 4, "swiss", 4, stuck, everyone)),
    ]  # fmt: skip
    return [(name, secret or _secret(name), request) for name, secret, request in cases]


def request_json(request: DrawRequest) -> dict[str, Any]:
    """A request as the JavaScript implementation takes it."""
    return {
        "tournamentId": request.tournament_id,
        "round": request.round,
        "method": request.method,
        "tableSize": request.table_size,
        "entrants": [
            {"accountId": e.account_id, "points": e.points, "ratingMilli": e.rating_milli}
            for e in request.entrants
        ],
        "metBefore": sorted(sorted(pair) for pair in request.met_before),
    }


def _tampers(
    name: str, secret: bytes, request: DrawRequest, seating: Seating
) -> list[dict[str, Any]]:
    tables = [list(table) for table in seating]
    reordered = [list(t) for t in tables]
    reordered[0][0], reordered[0][1] = reordered[0][1], reordered[0][0]
    found = [{"seating": reordered, "reason": "seats_reordered"}]
    if len(tables) > 1:
        moved = [list(t) for t in tables]
        moved[0][0], moved[-1][0] = moved[-1][0], moved[0][0]
        found.append({"seating": moved, "reason": "player_moved"})
    found.append({"seating": tables[:-1] or [tables[0][:-1]], "reason": "tables_shape"})
    for item in found:
        problem = check_draw(
            secret,
            fingerprint(secret, request.tournament_id, request.round),
            request,
            item["seating"],
        )
        assert problem is not None and problem.reason == item["reason"], (name, item, problem)
    other = bytes(b ^ 0xFF for b in secret)
    found.append({"secret": other.hex(), "seating": tables, "reason": "fingerprint_mismatch"})
    return found


def pinned() -> dict[str, Any]:
    """The vectors: request, secret, fingerprint, input digest, seating, and tampered seatings."""
    vectors = []
    for name, secret, request in requests():
        seating = draw(secret, request)
        vectors.append(
            {
                "name": name,
                "secret": secret.hex(),
                "request": request_json(request),
                "fingerprint": fingerprint(secret, request.tournament_id, request.round),
                "inputDigest": input_digest(request),
                "seating": [list(table) for table in seating],
                "tampers": _tampers(name, secret, request, seating)
                if len(request.entrants) <= 40
                else [],
            }
        )
    return {"version": "president-seatdraw-v1", "vectors": vectors}


def pinned_text() -> str:
    """``pinned()`` as the committed file holds it: one line per vector."""
    data = pinned()
    items = ",\n  ".join(json.dumps(item, ensure_ascii=False) for item in data["vectors"])
    return f'{{\n "version": {json.dumps(data["version"])},\n "vectors": [\n  {items}\n ]\n}}\n'


def random_request(rng: random.Random) -> DrawRequest:
    """A random request: any method, 1 to 40 entrants, 2 to 6 seats, 0 to 4 earlier rounds."""
    n = rng.choice([1, 2, 3, 5, rng.randint(1, 40)])
    size = rng.randint(2, 6)
    ids = [
        rng.choice(["", "é", "\U0001f600", "Z"]) + f"u{rng.randrange(10**6)}-{i}" for i in range(n)
    ]
    entrants = tuple(
        DrawEntrant(
            a,
            rng.randint(-3, rng.choice([0, 3, 12])),
            rng.randint(-(10**6), rng.choice([0, 10, 3 * 10**6])),
        )
        for a in ids
    )
    met: set[frozenset[str]] = set()
    for _ in range(rng.randint(0, 4)):
        order = rng.sample(ids + ["withdrawn-1", "withdrawn-2"], n + 2)
        for start in range(0, len(order), size):
            met |= {frozenset(p) for p in itertools.combinations(order[start : start + size], 2)}
    return DrawRequest(
        f"t-{rng.randrange(10**9)}",
        rng.randint(1, 12),
        rng.choice(METHODS),
        size,
        entrants,
        frozenset(met),
    )


def random_cases(seed: int, count: int) -> list[dict[str, Any]]:
    """Random requests and secrets with the Python draw of each."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        request = random_request(rng)
        secret = rng.randbytes(32)
        cases.append(
            {
                "secret": secret.hex(),
                "request": request_json(request),
                "fingerprint": fingerprint(secret, request.tournament_id, request.round),
                "inputDigest": input_digest(request),
                "seating": [list(table) for table in draw(secret, request)],
            }
        )
    return cases


if __name__ == "__main__":
    PINNED_FILE.write_text(pinned_text(), encoding="utf-8")
    sys.stdout.write(f"wrote {PINNED_FILE}\n")
