"""A round's secret is stored before the next round starts: :func:`check_reveal_order`.

The table reveals an ended round's secret before it starts another, so a log
where a ``DealRevealed`` comes after the next round (``NextRoundStarted``, or a
new game's ``GameStarted``) began is a discrepancy, found at the late reveal.
"""

from __future__ import annotations

from collections.abc import Sequence

from president import codec
from president.audit.reports import Found
from president.hosting.events import DealCommitted, DealRevealed
from president.rules import game as g
from president.rules import round as rnd
from president.store import StoredEvent


def check_reveal_order(events: Sequence[StoredEvent]) -> None:
    """Raise :class:`Found` at the first reveal stored after the next round started."""
    dealt: tuple[int, int] | None = None  # the round the last DealCommitted began
    ended: tuple[int, int] | None = None  # that round, once it ended unrevealed
    next_started: StoredEvent | None = None  # what started a round after it
    for stored in events:
        try:
            event = codec.decode(stored.type, stored.payload)
        except Exception:
            continue  # an unreadable event is the walk's finding, not this one's
        if isinstance(event, DealCommitted):
            dealt, ended, next_started = (event.game_no, event.round_no), None, None
        elif isinstance(event, rnd.RoundEnded):
            ended = dealt
        elif isinstance(event, g.NextRoundStarted | g.GameStarted) and ended is not None:
            next_started = next_started or stored
        elif isinstance(event, DealRevealed):
            key = (event.game_no, event.round_no)
            if key == ended and next_started is not None:
                raise Found(
                    stored,
                    f"round {event.round_no} of game {event.game_no} was revealed after the "
                    f"next round started (version {next_started.version}): a round starts "
                    "only once the last one's secret is stored",
                )
            if key == ended:
                ended, next_started = None, None
