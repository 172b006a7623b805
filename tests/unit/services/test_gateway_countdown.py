"""The countdowns the gateway puts in its views: between rounds and after a game too.

The gateway follows the timer service's waits (``PRESIDENT_HOST_IDLE_SECONDS``): while the
host thinks, a view says when the table moves on by itself, from the same start the timer
counts from (the commit time of the event that left the table waiting).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from president.hosting.countdown import unix_ms
from president.hosting.deadlines import (
    BETWEEN_ROUNDS,
    RAPID,
    IdleRules,
    event_time,
    waits_for_server,
)
from president.hosting.move_on import BOTS
from president.services.gateway.streams.entries import Entry
from tests.support.gateway_entries import game_entries

RULES = IdleRules(host_idle_seconds=45, empty_seconds=10)


def host_waits(entries: list[Entry]) -> list[Entry]:
    """The entries after which the table waits for its host (between rounds, after the game;
    not for the server's reveal of the round's secret)."""
    return [
        entry
        for entry in entries
        if entry.table.game.phase.value in ("between_rounds", "game_over")
        and not waits_for_server(entry.table)
    ]


def test_between_rounds_and_after_the_game_the_view_counts_the_hosts_wait(
    tmp_path: Path,
) -> None:
    entries = game_entries(tmp_path, rounds=2, idle=RULES)
    waiting = host_waits(entries)
    assert waiting and waiting[-1] is entries[-1]
    for entry in waiting:
        view = entry.countdown()
        assert view.deadline_kind == BETWEEN_ROUNDS, entry.version
        assert not view.HasField("deadline_seat")
    # The wait starts when the table started waiting (the round's end), not at each event.
    first = waiting[0]
    started = event_time(first.envelope, first.made_at)
    expected = unix_ms(started + timedelta(seconds=RULES.host_idle_seconds))
    assert first.countdown().deadline_unix_ms == expected


def test_without_the_waits_nothing_is_counted_between_rounds(tmp_path: Path) -> None:
    entries = game_entries(tmp_path, rounds=2)
    waiting = host_waits(entries)
    assert waiting and all(not e.countdown().HasField("deadline_unix_ms") for e in waiting)


def test_in_rapid_play_the_view_shows_the_shared_timer_not_the_bots_wait(
    tmp_path: Path,
) -> None:
    """The timer moves rapid bots after their human-like delay (a ``bots`` deadline); the
    people race the shared rapid timer, and that is the countdown a view shows."""
    entries = game_entries(tmp_path, preset="house-rapid", rounds=1, idle=RULES)
    bots_waiting = [
        e for e in entries if e.clock and e.clock.deadline and e.clock.deadline.kind == BOTS
    ]
    assert bots_waiting
    for entry in bots_waiting:
        assert entry.countdown().deadline_kind == RAPID, entry.version
