"""CheckDeal checks the exchange: the automatic gives and the free returns of a round.

A real TableHost on a real SQLite store plays round 1 and round 2 of a house
game (round 2 has an exchange); the recorded log checks out, and a log whose
automatic give or free return was altered does not, with the reason in words.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from president.events.v1 import events_pb2 as epb
from president.rules import game as g
from president.rules.cards import mask_of, names, strongest
from president.services.gateway.calls.dealcheck import check_deal
from president.store import EventStore
from tests.unit.services.test_gateway_units import LocalTables, bot_table, play_human


@pytest.fixture
def tables(tmp_path: Path) -> LocalTables:
    return LocalTables(EventStore.from_url(f"sqlite:///{tmp_path / 'events.db'}", migrate=True))


def two_rounds(tables: LocalTables) -> list[epb.EventEnvelope]:
    bot_table(tables)
    play_human(tables, "t1", 300)
    tables.host.decide_and_append("t1", g.NextRound(), "next", "p0")
    play_human(tables, "t1", 300)
    return asyncio.run(tables.read_events("t1", 0))


def edited(
    events: list[epb.EventEnvelope], change: Callable[[int, epb.CardsGiven], None]
) -> list[epb.EventEnvelope]:
    """The log with ``change`` applied to each CardsGiven (numbered from 0)."""
    out = []
    number = 0
    for item in events:
        copy = epb.EventEnvelope()
        copy.CopyFrom(item)
        if item.type.endswith("CardsGiven"):
            gift = epb.CardsGiven.FromString(item.payload)
            change(number, gift)
            copy.payload = gift.SerializeToString()
            number += 1
        out.append(copy)
    return out


def test_the_recorded_exchange_checks_out(tables: LocalTables) -> None:
    events = two_rounds(tables)
    first = check_deal(events, 1, 1)
    assert first.verified and first.exchange_verified and not first.exchange
    checked = check_deal(events, 1, 2)
    assert checked.verified, checked.problem
    assert checked.exchange_verified and checked.exchange_problem == ""
    automatic = [gift for gift in checked.exchange if gift.automatic]
    returns = [gift for gift in checked.exchange if not gift.automatic]
    assert automatic and len(returns) == len(automatic)
    dealt = {hand.seat: mask_of(list(hand.cards)) for hand in checked.hands}
    after = {hand.seat: mask_of(list(hand.cards)) for hand in checked.exchanged_hands}
    for gift in automatic:
        given = mask_of(list(gift.cards))
        assert given == strongest(dealt[gift.giver], given.bit_count())
        assert not after[gift.giver] & given or any(
            r.giver == gift.receiver and mask_of(list(r.cards)) & given for r in returns
        )
    assert sum(m.bit_count() for m in after.values()) == 52


def test_an_automatic_give_that_is_not_the_strongest_is_found(tables: LocalTables) -> None:
    events = two_rounds(tables)
    dealt = {hand.seat: mask_of(list(hand.cards)) for hand in check_deal(events, 1, 2).hands}

    def weaken(number: int, gift: epb.CardsGiven) -> None:
        if number == 0:
            assert gift.automatic
            weaker = dealt[gift.giver] & ~strongest(dealt[gift.giver], len(gift.cards))
            gift.cards[-1] = names(weaker)[0]

    checked = check_deal(edited(events, weaken), 1, 2)
    assert not checked.exchange_verified and not checked.verified
    assert "strongest" in checked.exchange_problem
    assert checked.exchange_problem in checked.problem


def test_a_return_of_cards_never_held_is_found(tables: LocalTables) -> None:
    events = two_rounds(tables)
    checked = check_deal(events, 1, 2)
    returns = [i for i, gift in enumerate(checked.exchange) if not gift.automatic]
    returner = checked.exchange[returns[0]].giver
    held = {h.seat: mask_of(list(h.cards)) for h in checked.hands}[returner]
    received = 0
    for gift in checked.exchange:
        if gift.automatic and gift.receiver == returner:
            received |= mask_of(list(gift.cards))
    foreign = names(((1 << 52) - 1) & ~(held | received))[0]

    def steal(number: int, gift: epb.CardsGiven) -> None:
        if number == returns[0]:
            gift.cards[0] = foreign

    broken = check_deal(edited(events, steal), 1, 2)
    assert not broken.exchange_verified
    assert f"returned {foreign}" in broken.exchange_problem
    assert "did not hold" in broken.exchange_problem
