"""A deterministic fake of the tournament core's own seat draw port, and a driver of tournaments."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from president.tournament.commands import (
    SERVER,
    CreateTournament,
    RecordResult,
    RevealRound,
    StartRound,
    TournamentCommand,
    TournamentSettings,
)
from president.tournament.decide import decide
from president.tournament.draw import fingerprint
from president.tournament.drawing import seat_command
from president.tournament.events import TournamentEvent
from president.tournament.port import DrawRequest, Seating
from president.tournament.state import Tournament, evolve

T0 = datetime(2026, 12, 4, 18, 0, tzinfo=UTC)
OPENS = T0 + timedelta(hours=1)
CLOSES = T0 + timedelta(hours=2)
STARTS = T0 + timedelta(hours=2)


class FakeSeatDraw:
    """Shuffles the entrants by the secret (Swiss: by points, then the shuffle) and
    spreads the bots so that tables differ by at most one entrant."""

    def draw(self, secret: bytes, request: DrawRequest) -> Seating:
        rng = random.Random(hashlib.sha256(secret + bytes([request.round])).digest())
        entrants = [e.account_id for e in request.entrants]
        rng.shuffle(entrants)
        if request.method == "swiss":
            points = {e.account_id: e.points for e in request.entrants}
            entrants.sort(key=lambda a: -points[a])
        size = request.table_size
        tables = -(-len(entrants) // size)
        seating: list[tuple[str | None, ...]] = []
        start = 0
        for t in range(tables):
            count = len(entrants) // tables + (t < len(entrants) % tables)
            seated: list[str | None] = list(entrants[start : start + count])
            seating.append(tuple(seated + [None] * (size - count)))
            start += count
        return tuple(seating)


def settings(**changes: Any) -> TournamentSettings:
    """A Swiss tournament of the club preset at tables of 4, changed by ``changes``."""
    base = TournamentSettings(
        name="Friday",
        preset="club",
        format="swiss",
        rounds=3,
        table_size=4,
        capacity=16,
        opens_at=OPENS,
        closes_at=CLOSES,
        starts_at=STARTS,
    )
    return replace(base, **changes)


@dataclass
class Driver:
    """A tournament driven through ``decide`` and ``evolve``, keeping its log."""

    state: Tournament | None = None
    log: list[TournamentEvent] = field(default_factory=list)
    now: datetime = T0
    draw: FakeSeatDraw = field(default_factory=FakeSeatDraw)

    def do(self, command: TournamentCommand) -> tuple[TournamentEvent, ...]:
        events = decide(self.state, command, self.now)
        for event in events:
            self.state = evolve(self.state, event)
        self.log.extend(events)
        return events

    @property
    def t(self) -> Tournament:
        assert self.state is not None
        return self.state

    def create(self, host: str = "host", **changes: Any) -> Driver:
        self.do(CreateTournament(host, "t1", settings(**changes)))
        return self

    def play_round(self, rng: random.Random, secret: bytes | None = None) -> None:
        """Commit, seat, give every table random places, reveal."""
        round_no = len(self.t.rounds) + 1
        secret = secret if secret is not None else bytes([round_no]) * 32
        self.do(StartRound(SERVER, round_no, fingerprint(secret, self.t.tournament_id, round_no)))
        self.do(seat_command(self.t, self.draw, secret))
        seating = self.t.rounds[-1].seating
        assert seating is not None
        for table, seats in enumerate(seating):
            places = list(range(1, len(seats) + 1))
            rng.shuffle(places)
            self.do(RecordResult(SERVER, round_no, table, tuple(places)))
        self.do(RevealRound(SERVER, round_no, secret))
