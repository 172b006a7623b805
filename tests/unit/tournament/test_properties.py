"""Properties of whole random tournaments: replays, standings, seatings, and refusals."""

from __future__ import annotations

import copy
import dataclasses
import random
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from president.rules.options import PRESETS, options_for
from president.tournament.commands import (
    SERVER,
    CancelTournament,
    Enter,
    FinishTournament,
    Invite,
    RecordResult,
    Retire,
    RevealRound,
    SeatRound,
    SettleTable,
    StartRound,
    TournamentCommand,
    Withdraw,
)
from president.tournament.draw import fingerprint
from president.tournament.drawing import redraw_matches, seat_command
from president.tournament.errors import Refusal, TournamentRefused
from president.tournament.events import (
    RoundDrawCommitted,
    RoundRevealed,
    TableResultRecorded,
    TableSettled,
    TournamentEvent,
)
from president.tournament.pairing import drawable, rounds_remain
from president.tournament.standings import standings
from president.tournament.state import Status, fold
from tests.support.tournaments import CLOSES, OPENS, STARTS, Driver

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def tournaments(draw: st.DrawFn) -> tuple[Driver, random.Random]:
    """A created tournament with its entrants in, at its start, and a random source."""
    preset = draw(st.sampled_from(PRESETS))
    options = options_for(preset)
    table_size = draw(st.integers(options.min_players, min(options.max_players, 6)))
    form = draw(st.sampled_from(["swiss", "elimination"]))
    late = form == "swiss" and draw(st.booleans())
    driver = Driver().create(
        preset=preset,
        format=form,
        table_size=table_size,
        rounds=draw(st.integers(1, 4)),
        capacity=60,
        closes_at=STARTS + timedelta(hours=3) if late else CLOSES,
        first_draw=draw(st.sampled_from(["random", "rating_bands"])),
    )
    driver.now = OPENS
    rng = random.Random(draw(st.integers(0, 2**32)))
    for n in range(draw(st.integers(2, 40))):
        driver.do(Enter(f"p{n}", rating_milli=rng.randrange(0, 3000)))
    driver.now = STARTS
    return driver, rng


def play_table(driver: Driver, rng: random.Random, round_no: int, table: int) -> None:
    seats = (driver.t.rounds[-1].seating or ())[table]
    minimum = options_for(driver.t.settings.preset).min_players
    if rng.random() < 0.15 and len(seats) - 1 < minimum:
        standing = tuple(rng.sample(range(len(seats)), len(seats)))
        departed = frozenset(rng.sample(range(len(seats)), rng.randint(1, len(seats))))
        driver.do(SettleTable(SERVER, round_no, table, standing, departed))
    else:
        places = tuple(rng.sample(range(1, len(seats) + 1), len(seats)))
        driver.do(RecordResult(SERVER, round_no, table, places))


def now_and_then(driver: Driver, rng: random.Random) -> None:
    """A retirement, or in a Swiss a late arrival, now and then."""
    playing = [e.account_id for e in driver.t.entrants if not e.retired]
    if playing and rng.random() < 0.1:
        driver.do(Retire(rng.choice(playing)))
    if driver.t.settings.closes_at > driver.now and rng.random() < 0.2:
        driver.do(Enter(f"late{len(driver.t.entrants)}"))


def run(driver: Driver, rng: random.Random) -> None:
    while rounds_remain(driver.t):
        round_no = len(driver.t.rounds) + 1
        expected = drawable(driver.t)
        secret = rng.randbytes(32)
        driver.do(
            StartRound(SERVER, round_no, fingerprint(secret, driver.t.tournament_id, round_no))
        )
        request = driver.t.rounds[-1].request
        assert request.entrants == tuple(
            type(request.entrants[0])(e.account_id, p.points, e.rating_milli)
            for e, p in zip(expected, request.entrants, strict=True)
        )
        if driver.t.settings.format == "swiss":
            assert {e.account_id for e in request.entrants} == {
                e.account_id for e in driver.t.entrants if not e.retired
            }
        now_and_then(driver, rng)
        driver.do(seat_command(driver.t, driver.draw, secret))
        seating = driver.t.rounds[-1].seating or ()
        for table in rng.sample(range(len(seating)), len(seating)):
            now_and_then(driver, rng)
            play_table(driver, rng, round_no, table)
        driver.do(RevealRound(SERVER, round_no, secret))
        driver.now += timedelta(minutes=40)


@SETTINGS
@given(tournaments())
def test_a_random_tournament_seats_everyone_once_a_round_and_scores_every_round(
    case: tuple[Driver, random.Random],
) -> None:
    driver, rng = case
    run(driver, rng)
    if not driver.t.rounds:
        return
    driver.do(FinishTournament(SERVER))
    state = driver.t
    assert state.status == Status.FINISHED
    for record in state.rounds:
        assert record.scored and record.secret is not None
        assert redraw_matches(record, driver.draw)
        seated = [a for table in record.seating or () for a in table if a is not None]
        assert sorted(seated) == sorted(e.account_id for e in record.request.entrants)
        assert len(seated) == len(set(seated))
    assert sorted(state.ranking) == sorted(e.account_id for e in state.entrants)
    # evolve is a fold: the log replays to the same tournament, whole or in two parts.
    assert fold(driver.log) == state
    cut = rng.randrange(1, len(driver.log))
    assert fold(driver.log[cut:], fold(driver.log[:cut])) == state
    # The standings are a function of the results: the order tables reported in, the
    # secrets and fingerprints, change nothing.
    shuffled = shuffle_results(driver.log, rng)
    assert standings(fold(shuffled)) == standings(state)  # type: ignore[arg-type]
    assert standings(fold(other_secrets(driver.log))) == standings(state)  # type: ignore[arg-type]


def shuffle_results(log: list[TournamentEvent], rng: random.Random) -> list[TournamentEvent]:
    """The log with each round's table results in another order, every other event in place."""
    out = list(log)
    start = 0
    for end, event in enumerate(log):
        if isinstance(event, RoundRevealed):
            spots = [
                i
                for i in range(start, end)
                if isinstance(log[i], TableResultRecorded | TableSettled)
            ]
            for spot, moved in zip(spots, rng.sample(spots, len(spots)), strict=True):
                out[spot] = log[moved]
            start = end
    return out


def other_secrets(log: list[TournamentEvent]) -> list[TournamentEvent]:
    """The log with other fingerprints and secrets: the same seatings and results."""
    return [
        dataclasses.replace(event, fingerprint="0" * 64)
        if isinstance(event, RoundDrawCommitted)
        else dataclasses.replace(event, secret=b"other")
        if isinstance(event, RoundRevealed)
        else event
        for event in log
    ]


def random_command(driver: Driver, rng: random.Random) -> TournamentCommand:
    """Any command, right or wrong, from anyone."""
    accounts = ["host", "operator", SERVER, "p0", "p1", "p2", "x", "g"]
    actor = rng.choice(accounts)
    state = driver.state
    round_no = (len(state.rounds) if state else 0) + rng.choice([-1, 0, 0, 1])
    record = state.rounds[-1] if state and state.rounds else None
    tables = len(record.seating or ()) if record else 1
    request = record.request if record else None
    pick = rng.randrange(11)
    if pick == 0:
        return Enter(actor, guest=actor == "g", rating_milli=rng.randrange(3000))
    if pick == 1:
        return Withdraw(actor)
    if pick == 2:
        return Retire(actor)
    if pick == 3:
        return Invite(actor, tuple(rng.sample(accounts, 2)))
    if pick == 4:
        return CancelTournament(actor) if rng.random() < 0.05 else Enter(actor)
    if pick == 5:
        return StartRound(rng.choice([SERVER, actor]), round_no + 1, rng.choice(["", "ab"]))
    if pick == 6 and request is not None:
        seating = driver.draw.draw(rng.randbytes(8), request)
        if rng.random() < 0.3 and seating:
            seating = seating[1:] or (seating[0][::-1],)
        return SeatRound(rng.choice([SERVER, actor]), round_no, seating)
    if pick == 7:
        size = driver.t.settings.table_size + rng.choice([0, 0, -1])
        places = tuple(rng.sample(range(1, size + 1), size))
        return RecordResult(SERVER, round_no, rng.randrange(-1, tables + 1), places)
    if pick == 8:
        size = driver.t.settings.table_size
        standing = tuple(rng.sample(range(size), size))
        departed = frozenset(rng.sample(range(size), rng.randint(0, size)))
        return SettleTable(SERVER, round_no, rng.randrange(tables + 1), standing, departed)
    if pick == 9:
        return RevealRound(rng.choice([SERVER, actor]), round_no, rng.choice([b"", b"s"]))
    return FinishTournament(rng.choice([SERVER, actor]))


@SETTINGS
@given(st.integers(0, 2**32), st.sampled_from(["swiss", "elimination"]), st.booleans())
def test_any_command_is_decided_or_refused_and_a_refusal_changes_nothing(
    seed: int, form: str, public: bool
) -> None:
    rng = random.Random(seed)
    driver = Driver().create(format=form, public=public, guests_allowed=rng.random() < 0.5)
    times = [OPENS - timedelta(minutes=1), OPENS, STARTS, STARTS + timedelta(hours=5)]
    refusals = set()
    for _ in range(150):
        driver.now = rng.choice(times)
        command = random_command(driver, rng)
        before = copy.deepcopy(driver.state)
        log = len(driver.log)
        try:
            driver.do(command)
        except TournamentRefused as refusal:
            assert refusal.reason in Refusal and refusal.sentence
            assert driver.state == before and len(driver.log) == log
            refusals.add(refusal.reason)
        else:
            assert fold(driver.log) == driver.state
    assert refusals
