"""A seat reacts (chats) a few times per window: more is REACTION_RATE (CHAT_RATE), and what is
kept is bounded."""

from __future__ import annotations

import pytest

from president.servicekit.errors import Code, ServiceError
from president.services.table.seat_limit import CHAT_BURST, SeatLimit, chat_limit


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_seat_reacts_a_few_times_per_window() -> None:
    clock = Clock()
    limit = SeatLimit(3, 10.0, clock=clock)
    for _ in range(3):
        limit.admit("t1", 0)
    with pytest.raises(ServiceError) as refused:
        limit.admit("t1", 0)
    error = refused.value
    assert (error.status, error.reason) == (Code.RESOURCE_EXHAUSTED, "REACTION_RATE")
    assert "at most 3 reactions every 10 seconds" in error.message
    limit.admit("t1", 1)  # another seat
    limit.admit("t2", 0)  # another table
    clock.now += 10.0
    limit.admit("t1", 0)  # the window moved on


def test_what_is_kept_is_bounded() -> None:
    clock = Clock()
    limit = SeatLimit(1, 10.0, max_seats=2, clock=clock)
    limit.admit("t1", 0)
    limit.admit("t1", 1)
    limit.admit("t1", 2)  # t1/0 is forgotten: the least recently active
    limit.admit("t1", 0)
    with pytest.raises(ServiceError):
        limit.admit("t1", 0)


def test_a_seat_chats_a_few_times_per_window() -> None:
    clock = Clock()
    limit = chat_limit(clock)
    for _ in range(CHAT_BURST):
        limit.admit("t1", 0)
    with pytest.raises(ServiceError) as refused:
        limit.admit("t1", 0)
    assert (refused.value.status, refused.value.reason) == (Code.RESOURCE_EXHAUSTED, "CHAT_RATE")
    assert f"at most {CHAT_BURST} chat messages every 10 seconds" in refused.value.message
