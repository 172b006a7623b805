"""The gRPC spectators of one table at this replica: a paced broadcast of the table's changes
(:class:`~president.services.gateway.streams.fanout.Broadcast`), each spectator a mailbox its
stream's handler reads, written after the seats, a batch per loop turn.

A table's feed tells its seats' broadcast of a change at once and its spectators' broadcast
(:func:`broadcast`) once a :func:`pace` passed since that one last wrote: the spectators at
this replica over the writes a second it gives them (:data:`WRITES_PER_SECOND`). A crowd of
any size thus takes a bounded share of the replica's CPU, the seats keep the rest, and a
spectator is sent more changes per write the more spectators share the replica (a batched
``Watch`` sends them in one message; a plain one, one message each). A flush writes
:data:`BATCH` spectators per event-loop turn: between two batches the loop reads its
sockets, so a seat's command, its answer and its own change never wait behind a thousand
spectators' writes. Every spectator holding the same version is handed the same bytes,
built once.

A spectator that reads too slowly (a phone on a bad network, a client that never reads, a
replica with more spectators than its CPU serves) is sent the newest view, marked
``skipped`` (the same bytes for every spectator skipped there), instead of the states it
missed: when its mailbox holds a write unread longer than :data:`AUDIENCE_LAG` (plus a
pace), when it lacks more than :data:`AUDIENCE_LIMIT` changes, or, once the spectators here
are a crowd (paced to :data:`CROWD_PACE` or slower), more than :data:`MOST_CHANGES`. It
never makes anyone wait.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from president.servicekit.config.gateway import AudienceSettings
from president.services.gateway.streams.fanout import Broadcast, Log, Mailbox, Policy, SeatOf, Wire

#: Spectators written per event-loop turn.
BATCH = 64
#: The most changes a spectator is sent in one write: one further behind skips to the newest
#: view (``PRESIDENT_AUDIENCE_INBOX``).
AUDIENCE_LIMIT = AudienceSettings().inbox
#: How long a write may wait unread in a spectator's mailbox before it skips to the newest
#: view (seconds; ``PRESIDENT_AUDIENCE_LAG_MS``).
AUDIENCE_LAG = AudienceSettings().lag_seconds
#: The most changes a spectator of a crowd is sent at once: once the spectators here are
#: paced to :data:`CROWD_PACE` or slower, one further behind skips to the view now, one
#: message, instead (so a crowd's CPU is bounded per write too).
MOST_CHANGES = 16
#: The pace from which the spectators here are a crowd (seconds: 80 spectators at 4,000
#: writes a second); below it a spectator is sent every change it lacks.
CROWD_PACE = 0.02
#: The spectators' stream writes a second this replica allows itself
#: (``PRESIDENT_AUDIENCE_WRITES``): at about 60 µs of CPU a gRPC stream write, 4,000 a second
#: is a quarter of a core, whatever the audience's size.
WRITES_PER_SECOND = AudienceSettings().writes_per_second


def configure(settings: AudienceSettings) -> None:
    """This replica's audience settings, set once at start (the gateway's bootstrap)."""
    global AUDIENCE_LIMIT, AUDIENCE_LAG, WRITES_PER_SECOND  # noqa: PLW0603 - set once, at start
    AUDIENCE_LIMIT = settings.inbox
    AUDIENCE_LAG = settings.lag_seconds
    WRITES_PER_SECOND = settings.writes_per_second


class _Spectators:
    """How many gRPC spectators this replica's tables hold (every table's)."""

    count = 0


def pace() -> float:
    """The least time between two writes of a table's spectators here, in seconds: the
    spectators here over :data:`WRITES_PER_SECOND`, so they write that often at most."""
    return _Spectators.count / WRITES_PER_SECOND


def most() -> int:
    """The most changes a spectator is sent in one write now (more: the view now)."""
    return MOST_CHANGES if pace() >= CROWD_PACE else AUDIENCE_LIMIT


def lag() -> float:
    """How long a write may wait unread before its spectator skips (a wait for the pace is
    no lag)."""
    return AUDIENCE_LAG + pace()


DELIVERIES = Counter(
    "president_gateway_audience_deliveries", "Changes taken by spectators from their log."
)
#: How long the oldest change a flush sends waited for it: this replica's share of a
#: spectator's delay (scale the audience out when its p99 grows past what watchers accept).
DELAY = Histogram(
    "president_gateway_audience_delay_seconds",
    "From a change's arrival at this replica to a spectator taking it (its oldest untaken).",
    buckets=(
        0.001,
        0.002,
        0.005,
        0.01,
        0.02,
        0.03,
        0.04,
        0.05,
        0.06,
        0.075,
        0.1,
        0.2,
        0.5,
        1.0,
        2.0,
    ),
)


def delivered(waited: float, changes: int) -> None:
    """A flush's share of the audience's metrics: its oldest change's wait, what it sent."""
    DELAY.observe(waited)
    DELIVERIES.inc(changes)


def broadcast(log: Log) -> Broadcast:
    """The paced broadcast of a table's gRPC spectators here (``log``: the table's feed)."""
    return Broadcast(log, pace=pace, delivered=delivered, batch=BATCH, most=most)


def spectator(seat_for: SeatOf, wire: Wire) -> Mailbox:
    """A new spectator's mailbox, counted in the :func:`pace` until it :func:`left`."""
    _Spectators.count += 1
    return Mailbox(seat_for, wire, Policy.NEWEST, lag=lag)


def left() -> None:
    """A spectator's stream ended."""
    _Spectators.count -= 1
