"""The committed seat draw of SEAT_DRAW.md: who sits at which table and seat in a round.

Pure: no I/O, no clock, and no randomness except :func:`new_secret`. A round's
seating is a function of its 32-byte secret and its :class:`DrawRequest`, so
anyone holding the revealed secret re-creates it exactly. docs/SEAT_DRAW.md
(``president-seatdraw-v1``) is the contract; the random stream and the
shuffle are DEAL.md's (:mod:`president.deal`) under a label of the draw's own.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeGuard

from president.deal import SECRET_SIZE, RandomStream, shuffle
from president.deal import new_secret as _deal_secret

SEATDRAW_VERSION = "president-seatdraw-v1"
METHODS = ("random", "rating_bands", "swiss")
MIN_TABLE_SIZE = 2
MAX_TABLE_SIZE = 52
MAX_ROUND = (1 << 32) - 1
#: Points and ratings are whole numbers a JavaScript number holds exactly.
MAX_SAFE_INTEGER = (1 << 53) - 1
#: How many candidate ranks the swiss search may examine before it settles for swaps.
SEARCH_STEPS = 100_000

_TAG = SEATDRAW_VERSION.encode("ascii")
_FINGERPRINT_TAG = _TAG + b"/fingerprint"
_STREAM_TAG = _TAG + b"/stream"
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")


@dataclass(frozen=True)
class DrawEntrant:
    """One entrant of a round's draw: tournament points so far, rating in thousandths."""

    account_id: str
    points: int
    rating_milli: int


@dataclass(frozen=True)
class DrawRequest:
    """Everything a round's draw depends on besides its secret.

    ``method`` is ``"random"``, ``"rating_bands"`` or ``"swiss"``; ``met_before``
    holds the pairs of account ids who shared a table in an earlier round (only
    ``swiss`` reads it). The order of ``entrants`` does not matter.
    """

    tournament_id: str
    round: int
    method: str
    table_size: int
    entrants: tuple[DrawEntrant, ...]
    met_before: frozenset[frozenset[str]] = frozenset()


#: Tables in order; seats in order; ``None`` is a bot's seat.
Seating = tuple[tuple[str | None, ...], ...]


class InvalidDrawRequest(ValueError):
    """A request no draw can be made of; ``reason`` is stable and machine-readable."""

    def __init__(self, reason: str, sentence: str) -> None:
        super().__init__(sentence)
        self.reason = reason


@dataclass(frozen=True)
class DrawProblem:
    """Why a recorded seating is not the draw of its secret.

    ``reason`` is one of ``invalid_secret``, ``fingerprint_mismatch``,
    ``invalid_request``, ``tables_shape``, ``player_moved``, ``seats_reordered``;
    ``detail`` says where, in a sentence.
    """

    reason: str
    detail: str


def new_secret() -> bytes:
    """A fresh secret for one round's draw: 32 bytes from the operating system's CSPRNG."""
    return _deal_secret()


def rating_milli(rating: float) -> int:
    """A rating as the draw's integer: ``round(rating * 1000)``, half to even, done once.

    The service records the integer in the round's input; verifiers read it and
    never round a float themselves.
    """
    return round(rating * 1000)


def _text(value: str) -> bytes:
    data = value.encode("utf-8")
    return _U32.pack(len(data)) + data


def _checked_secret(secret: bytes) -> bytes:
    if not isinstance(secret, bytes | bytearray | memoryview):
        raise TypeError(f"The draw's secret must be bytes, not {type(secret).__name__}.")
    key = bytes(secret)
    if len(key) != SECRET_SIZE:
        raise ValueError(
            f"The draw's secret must be exactly {SECRET_SIZE} bytes; this one has {len(key)}."
        )
    return key


def _checked_tournament(tournament_id: object, round_no: object) -> tuple[str, int]:
    if not _valid_text(tournament_id):
        raise InvalidDrawRequest(
            "invalid_tournament_id", "A tournament id must be a non-empty, valid Unicode text."
        )
    if type(round_no) is not int or not 1 <= round_no <= MAX_ROUND:
        raise InvalidDrawRequest(
            "invalid_round", f"A round number must be from 1 to {MAX_ROUND}; got {round_no!r}."
        )
    return tournament_id, round_no


def fingerprint(secret: bytes, tournament_id: str, round_no: int) -> str:
    """The draw's fingerprint, binding the tournament and the round.

    Lowercase hex SHA-256 of ``b"president-seatdraw-v1/fingerprint" ||
    text(tournament_id) || uint32_be(round) || secret``, where ``text`` is the
    UTF-8 bytes after their length as a big-endian uint32.
    """
    key = _checked_secret(secret)
    tournament, round_no = _checked_tournament(tournament_id, round_no)
    return hashlib.sha256(
        _FINGERPRINT_TAG + _text(tournament) + _U32.pack(round_no) + key
    ).hexdigest()


def _utf8_key(account_id: str) -> bytes:
    return account_id.encode("utf-8")


def _valid_text(value: object) -> TypeGuard[str]:
    """A non-empty text that UTF-8 can encode (no lone surrogates)."""
    if not isinstance(value, str) or not value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _checked_integer(value: object, what: str, account_id: str) -> int:
    if type(value) is not int or not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        raise InvalidDrawRequest(
            "invalid_entrant",
            f"{account_id}'s {what} must be a whole number within ±(2^53 - 1); got {value!r}.",
        )
    return value


@dataclass(frozen=True)
class _Canonical:
    """A checked request: entrants by account id (UTF-8 bytes), pairs among them, sorted."""

    request: DrawRequest
    entrants: tuple[DrawEntrant, ...]
    pairs: tuple[tuple[str, str], ...]


def _canonical(request: DrawRequest) -> _Canonical:
    if not isinstance(request, DrawRequest):
        raise TypeError(f"A draw needs a DrawRequest, not {type(request).__name__}.")
    _checked_tournament(request.tournament_id, request.round)
    if request.method not in METHODS:
        raise InvalidDrawRequest(
            "unknown_method",
            f"A draw's method is one of {', '.join(METHODS)}; got {request.method!r}.",
        )
    size = request.table_size
    if type(size) is not int or not MIN_TABLE_SIZE <= size <= MAX_TABLE_SIZE:
        raise InvalidDrawRequest(
            "invalid_table_size",
            f"A table seats {MIN_TABLE_SIZE} to {MAX_TABLE_SIZE} players; got {size!r}.",
        )
    if not request.entrants:
        raise InvalidDrawRequest("no_entrants", "A draw needs at least one entrant.")
    seen: set[str] = set()
    for entrant in request.entrants:
        if not isinstance(entrant, DrawEntrant):
            raise InvalidDrawRequest(
                "invalid_entrant", f"An entrant must be a DrawEntrant, not {entrant!r}."
            )
        account = entrant.account_id
        if not _valid_text(account):
            raise InvalidDrawRequest(
                "invalid_entrant",
                f"An account id must be a non-empty, valid Unicode text; got {account!r}.",
            )
        _checked_integer(entrant.points, "points", account)
        _checked_integer(entrant.rating_milli, "rating_milli", account)
        if account in seen:
            raise InvalidDrawRequest(
                "duplicate_entrant", f"{account} is entered twice; an entrant draws one seat."
            )
        seen.add(account)
    entrants = tuple(sorted(request.entrants, key=lambda e: _utf8_key(e.account_id)))
    pairs: list[tuple[str, str]] = []
    for pair in request.met_before:
        members = list(pair)
        if len(members) != 2 or not all(_valid_text(a) for a in members):
            raise InvalidDrawRequest(
                "invalid_pair",
                f"A pair who met must be two different account ids; got {members!r}.",
            )
        first, second = sorted(members, key=_utf8_key)
        if request.method == "swiss" and first in seen and second in seen:
            pairs.append((first, second))
    pairs.sort(key=lambda p: (_utf8_key(p[0]), _utf8_key(p[1])))
    return _Canonical(request, entrants, tuple(pairs))


def _encoding(canonical: _Canonical) -> bytes:
    request = canonical.request
    parts = [
        _text(SEATDRAW_VERSION),
        _text(request.tournament_id),
        _U32.pack(request.round),
        _text(request.method),
        _U32.pack(request.table_size),
        _U32.pack(len(canonical.entrants)),
    ]
    for entrant in canonical.entrants:
        parts += [
            _text(entrant.account_id),
            _I64.pack(entrant.points),
            _I64.pack(entrant.rating_milli),
        ]
    parts.append(_U32.pack(len(canonical.pairs)))
    for first, second in canonical.pairs:
        parts += [_text(first), _text(second)]
    return b"".join(parts)


def encode_request(request: DrawRequest) -> bytes:
    """The canonical encoding of SEAT_DRAW.md: the bytes the draw's stream is bound to."""
    return _encoding(_canonical(request))


def input_digest(request: DrawRequest) -> str:
    """Lowercase hex SHA-256 of :func:`encode_request`: the draw's input in 64 digits."""
    return hashlib.sha256(encode_request(request)).hexdigest()


def table_capacities(entrants: int, table_size: int) -> tuple[int, ...]:
    """How many entrants each table seats: ``ceil(n / size)`` tables, the bots spread.

    Table ``t`` of ``T`` seats ``n // T`` entrants, one more when ``t < n mod T``;
    the rest of its seats are bots'. No two tables differ by more than one bot,
    and the tables with more bots come last.
    """
    if entrants < 1 or table_size < 1:
        raise ValueError(f"No tables seat {entrants} entrants {table_size} to a table.")
    tables = -(-entrants // table_size)
    base, extra = divmod(entrants, tables)
    return tuple(base + (1 if t < extra else 0) for t in range(tables))


def _cut(capacities: Sequence[int]) -> list[list[int]]:
    groups: list[list[int]] = []
    start = 0
    for capacity in capacities:
        groups.append(list(range(start, start + capacity)))
        start += capacity
    return groups


def _repeat_free(
    met: Sequence[frozenset[int]], capacities: Sequence[int]
) -> list[list[int]] | None:
    """SEAT_DRAW.md's search: the first repeat-free tables in rank order, or None.

    Seats are filled table by table; a table's later seats take ranks above its
    earlier ones; a table's first seat is the best unseated rank when every table
    left is as large, else any unseated rank. None when there is no repeat-free
    seating or the search examined more than ``SEARCH_STEPS`` candidate ranks.
    """
    n = sum(capacities)
    table_of: list[int] = []
    first_seat: list[int] = []
    for table, capacity in enumerate(capacities):
        first_seat.append(len(table_of))
        table_of += [table] * capacity
    smallest = capacities[-1]
    anchored = [
        seat == first_seat[table_of[seat]] and capacities[table_of[seat]] == smallest
        for seat in range(n)
    ]
    chosen = [0] * n
    used = [False] * n
    lowest = 0  # the best unseated rank
    steps = 0
    seat = 0
    candidate = 0
    while True:
        start = first_seat[table_of[seat]]
        placed = False
        c = candidate
        while c < n:
            steps += 1
            if steps > SEARCH_STEPS:
                return None
            if not used[c] and not any(other in met[c] for other in chosen[start:seat]):
                placed = True
                break
            c += 1
        if placed:
            chosen[seat] = c
            used[c] = True
            while lowest < n and used[lowest]:
                lowest += 1
            seat += 1
            if seat == n:
                return [
                    chosen[first_seat[t] : first_seat[t] + cap] for t, cap in enumerate(capacities)
                ]
            candidate = lowest if seat == first_seat[table_of[seat]] else c + 1
            continue
        while True:  # back to the last seat with a choice left; an anchored seat has none
            seat -= 1
            if seat < 0:
                return None
            used[chosen[seat]] = False
            lowest = min(lowest, chosen[seat])
            if not anchored[seat]:
                candidate = chosen[seat] + 1
                break


def _fewest_repeats(met: Sequence[frozenset[int]], capacities: Sequence[int]) -> list[list[int]]:
    """SEAT_DRAW.md's fallback: each seat takes the best rank meeting fewest of its table."""
    n = sum(capacities)
    used = [False] * n
    groups: list[list[int]] = []
    for capacity in capacities:
        group: list[int] = []
        for _ in range(capacity):
            best, best_count = -1, 0
            for c in range(n):
                if used[c]:
                    continue
                count = sum(1 for other in group if other in met[c])
                if best < 0 or count < best_count:
                    best, best_count = c, count
                if count == 0:
                    break
            used[best] = True
            group.append(best)
        groups.append(sorted(group))
    return groups


def _swap_repeats_away(met: Sequence[frozenset[int]], groups: list[list[int]]) -> list[list[int]]:
    """SEAT_DRAW.md's repair: swap two players of two tables while that removes repeats.

    Tables are scanned in order, each table's players by rank; a player ``x``
    who met someone at their table tries the players ``y`` of the other tables
    nearest in rank first (``x-1, x+1, x-2, x+2, ...``), and the first swap that
    lowers the number of repeats is made; then the scan starts again. It stops
    when a whole scan makes no swap; each swap removes at least one repeat.
    """
    n = sum(len(group) for group in groups)
    table_of = [0] * n
    for t, group in enumerate(groups):
        for rank in group:
            table_of[rank] = t

    def meetings(player: int, group: Sequence[int], leaving: int) -> int:
        return sum(1 for other in group if other != leaving and other in met[player])

    def improving_swap() -> tuple[int, int] | None:
        for t, group in enumerate(groups):
            for x in group:
                before_x = meetings(x, group, x)
                if before_x == 0:
                    continue
                for distance in range(1, n):
                    for y in (x - distance, x + distance):
                        if not 0 <= y < n or table_of[y] == t:
                            continue
                        other = groups[table_of[y]]
                        before = before_x + meetings(y, other, y)
                        after = meetings(x, other, y) + meetings(y, group, x)
                        if after < before:
                            return x, y
        return None

    while (swap := improving_swap()) is not None:
        x, y = swap
        t, u = table_of[x], table_of[y]
        groups[t] = sorted(y if p == x else p for p in groups[t])
        groups[u] = sorted(x if p == y else p for p in groups[u])
        table_of[x], table_of[y] = u, t
    return groups


def _swiss(
    ranked: Sequence[DrawEntrant], pairs: Sequence[tuple[str, str]], capacities: Sequence[int]
) -> list[list[int]]:
    rank_of = {entrant.account_id: rank for rank, entrant in enumerate(ranked)}
    met_sets: list[set[int]] = [set() for _ in ranked]
    for first, second in pairs:
        a, b = rank_of[first], rank_of[second]
        met_sets[a].add(b)
        met_sets[b].add(a)
    met = [frozenset(s) for s in met_sets]
    return _repeat_free(met, capacities) or _swap_repeats_away(
        met, _fewest_repeats(met, capacities)
    )


def draw(secret: bytes, request: DrawRequest) -> Seating:
    """The round's seating: tables in order, seats in order, ``None`` for a bot's seat.

    Every entrant is seated exactly once; every table has ``table_size`` seats.
    Raises :class:`InvalidDrawRequest` on a request no draw can be made of.
    """
    key = _checked_secret(secret)
    canonical = _canonical(request)
    digest = hashlib.sha256(_encoding(canonical)).digest()
    stream = RandomStream(key, _STREAM_TAG + digest)
    shuffled = shuffle(canonical.entrants, stream)
    capacities = table_capacities(len(shuffled), request.table_size)
    if request.method == "random":
        ranked = shuffled
        groups = _cut(capacities)
    elif request.method == "rating_bands":
        ranked = sorted(shuffled, key=lambda e: -e.rating_milli)
        groups = _cut(capacities)
    else:
        ranked = sorted(shuffled, key=lambda e: -e.points)
        groups = _swiss(ranked, canonical.pairs, capacities)
    tables: list[tuple[str | None, ...]] = []
    for group in groups:
        seats: list[str | None] = list(shuffle([ranked[rank].account_id for rank in group], stream))
        seats += [None] * (request.table_size - len(seats))
        tables.append(tuple(seats))
    return tuple(tables)


def _compare(drawn: Seating, seating: Sequence[Sequence[str | None]]) -> DrawProblem | None:
    shape = [len(table) for table in seating]
    if shape != [len(table) for table in drawn]:
        return DrawProblem(
            "tables_shape",
            f"The seating has tables of {shape} seats; the draw has {len(drawn)} tables of "
            f"{len(drawn[0])} seats.",
        )
    drawn_at = {
        player: (t, s)
        for t, table in enumerate(drawn)
        for s, player in enumerate(table)
        if player is not None
    }
    seen: set[str] = set()
    for t, table in enumerate(seating):
        for s, player in enumerate(table):
            if player is None:
                continue
            here = f"Table {t}, seat {s} holds {player}"
            if player in seen:
                return DrawProblem("player_moved", f"{here}, who is seated twice.")
            seen.add(player)
            if player not in drawn_at:
                return DrawProblem("player_moved", f"{here}, whom the draw does not seat.")
            table_no, seat_no = drawn_at[player]
            if table_no != t:
                return DrawProblem(
                    "player_moved",
                    f"{here}; the draw seats them at table {table_no}, seat {seat_no}.",
                )
    for player, (table_no, seat_no) in drawn_at.items():
        if player not in seen:
            return DrawProblem(
                "player_moved",
                f"{player} has no seat; the draw seats them at table {table_no}, seat {seat_no}.",
            )
    for t, (table, ours) in enumerate(zip(seating, drawn, strict=True)):
        for s, (player, drawn_player) in enumerate(zip(table, ours, strict=True)):
            if player != drawn_player:
                return DrawProblem(
                    "seats_reordered",
                    f"Table {t}, seat {s} holds {player or 'a bot'}; the draw seats "
                    f"{drawn_player or 'a bot'} there.",
                )
    return None


def check_draw(
    secret: bytes,
    fingerprint_hex: str,
    request: DrawRequest,
    seating: Sequence[Sequence[str | None]],
) -> DrawProblem | None:
    """Whether ``seating`` is the draw of ``secret`` committed to by ``fingerprint_hex``.

    ``None`` when it is; else the first problem found: the secret, its
    fingerprint, the request, the tables' shape, a player at another table, or
    seats in another order.
    """
    try:
        key = _checked_secret(secret)
    except (TypeError, ValueError) as error:
        return DrawProblem("invalid_secret", str(error))
    try:
        expected = fingerprint(key, request.tournament_id, request.round)
    except InvalidDrawRequest as error:
        return DrawProblem("invalid_request", str(error))
    if not isinstance(fingerprint_hex, str) or not hmac.compare_digest(
        expected.encode("ascii"), fingerprint_hex.encode("utf-8")
    ):
        return DrawProblem(
            "fingerprint_mismatch",
            f"The secret does not have the committed fingerprint of {request.tournament_id} "
            f"round {request.round}.",
        )
    try:
        drawn = draw(key, request)
    except InvalidDrawRequest as error:
        return DrawProblem("invalid_request", str(error))
    return _compare(drawn, seating)
