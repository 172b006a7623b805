"""A round's secret is stored before the next round starts: :func:`check_reveal_order`.

The table reveals an ended round's secret before it starts another, so a log
where a ``DealRevealed`` comes after the next round (``NextRoundStarted``, or a
new game's ``GameStarted``) began is a discrepancy, found at the late reveal.
"""

from __future__ import annotations

from collections.abc import Sequence

from president import codec
from president.audit.reports import Found
from president.events.v1 import events_pb2 as pb
from president.hosting.events import DealCommitted, DealRevealed, DealSecretLost
from president.store import StoredEvent

_COMMITTED = codec.type_name(pb.DealCommitted)
_REVEALED = codec.type_name(pb.DealRevealed)
_LOST = codec.type_name(pb.DealSecretLost)
_ENDED = codec.type_name(pb.RoundEnded)
_STARTED = frozenset({codec.type_name(pb.NextRoundStarted), codec.type_name(pb.GameStarted)})
_WATCHED = frozenset({_COMMITTED, _REVEALED, _LOST, _ENDED, *_STARTED})
"""The only types the check reads (by name: the others are never decoded)."""


def check_reveal_order(events: Sequence[StoredEvent]) -> None:
    """Raise :class:`Found` at the first reveal stored after the next round started."""
    dealt: tuple[int, int] | None = None  # the round the last DealCommitted began
    ended: tuple[int, int] | None = None  # that round, once it ended unrevealed
    next_started: StoredEvent | None = None  # what started a round after it
    for stored in events:
        kind = stored.type
        if kind not in _WATCHED:
            continue
        if kind == _ENDED:
            ended = dealt
            continue
        if kind in _STARTED:
            if ended is not None:
                next_started = next_started or stored
            continue
        try:
            event = codec.decode(kind, stored.payload)
        except Exception:
            continue  # an unreadable event is the walk's finding, not this one's
        if isinstance(event, DealCommitted):
            dealt, ended, next_started = (event.game_no, event.round_no), None, None
        elif isinstance(event, (DealRevealed, DealSecretLost)):  # a loss ends a round too
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
