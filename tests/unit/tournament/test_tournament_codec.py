"""The tournament codec: every event stored as canonical JSON and read back exactly."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import get_args

import pytest

from president import tournament_codec as codec
from president.tournament.commands import SERVER, Enter, Invite, Retire, Withdraw
from president.tournament.events import (
    Entered,
    EntrantRetired,
    EntrantsInvited,
    EntryWithdrawn,
    RoundDrawCommitted,
    RoundRevealed,
    RoundSeated,
    TableResultRecorded,
    TableSettled,
    TournamentCancelled,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
)
from president.tournament.port import DrawEntrant, DrawRequest
from president.tournament.state import fold
from tests.support.tournaments import OPENS, Driver, settings

REQUEST = DrawRequest(
    "t1",
    2,
    "swiss",
    4,
    (DrawEntrant("ann", 3, 1500), DrawEntrant("bob", 0, -250)),
    frozenset({frozenset({"ann", "bob"})}),
)
EVERY_EVENT: tuple[TournamentEvent, ...] = (
    TournamentCreated(
        "t1", "host", settings(options=(("jokers", "2"),), public=False, guests_allowed=True)
    ),
    EntrantsInvited(("ann", "bob")),
    TournamentCancelled(),
    Entered("ann", True, 1500),
    EntryWithdrawn("ann"),
    EntrantRetired("bob", 2),
    RoundDrawCommitted(2, "ab" * 32, REQUEST),
    RoundSeated(2, (("ann", None, "bob", None), (None, "cid", None, None))),
    TableResultRecorded(2, 0, (2, 4, 1, 3)),
    TableSettled(2, 1, (1, 2, 3, 4), frozenset({0, 2})),
    RoundRevealed(2, bytes(range(32))),
    TournamentFinished(("ann", "bob", "cid")),
)


def test_every_event_type_is_covered() -> None:
    assert {type(event) for event in EVERY_EVENT} == set(get_args(TournamentEvent))


@pytest.mark.parametrize("event", EVERY_EVENT, ids=lambda e: type(e).__name__)
def test_an_event_reads_back_as_it_was(event: TournamentEvent) -> None:
    stored = codec.encode(event)
    assert codec.decode(codec.type_name(event), stored) == event
    assert codec.type_name(event) == f"president.tournament.{type(event).__name__}"
    text = stored.decode()
    assert text == json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))


def test_a_whole_tournament_folds_the_same_from_its_stored_events() -> None:
    driver = Driver().create(guests_allowed=True)
    driver.now = OPENS
    for account in ("a", "b", "c", "d", "e"):
        driver.do(Enter(account, guest=account == "e", rating_milli=ord(account) * 10))
    driver.do(Withdraw("e"))
    driver.do(Invite("host", ("z",)))
    driver.now = replace(settings()).starts_at
    rng = random.Random(7)
    driver.play_round(rng)
    driver.do(Retire("d"))
    driver.play_round(rng)
    stored = [(codec.type_name(e), codec.encode(e)) for e in driver.log]
    assert fold(codec.decode(kind, payload) for kind, payload in stored) == driver.state
    assert SERVER not in {e.account_id for e in driver.t.entrants}


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        ("president.events.v1.TableCreated", b"{}"),
        ("president.tournament.NoSuchEvent", b"{}"),
        ("president.tournament.Entered", b"not json"),
        ("president.tournament.Entered", b'{"account_id": "a"}'),
    ],
)
def test_what_is_no_tournament_event_is_refused(kind: str, payload: bytes) -> None:
    with pytest.raises(codec.NotATournamentEvent):
        codec.decode(kind, payload)
