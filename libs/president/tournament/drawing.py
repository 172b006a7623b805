"""The core's use of the seat draw: a round seated from its secret, and re-drawn once revealed.

The draw itself comes through the port :class:`president.tournament.port.SeatDraw`;
the request is the one the round committed to
(:class:`president.tournament.events.RoundDrawCommitted`), so the seating depends
on nothing but the secret and what the log already holds.
"""

from __future__ import annotations

from president.tournament.commands import SERVER, SeatRound
from president.tournament.errors import Refusal, TournamentRefused
from president.tournament.port import SeatDraw
from president.tournament.state import RoundRecord, Tournament


def seat_command(state: Tournament, seat_draw: SeatDraw, secret: bytes) -> SeatRound:
    """The server's command that seats the committed round under way, drawn from ``secret``."""
    if not state.rounds or state.rounds[-1].seating is not None:
        raise TournamentRefused(Refusal.WRONG_ROUND, "no committed round waits for its seating")
    record = state.rounds[-1]
    return SeatRound(SERVER, record.round_no, seat_draw.draw(secret, record.request))


def redraw_matches(record: RoundRecord, seat_draw: SeatDraw) -> bool:
    """Whether a revealed round's secret draws the seating the round was played at."""
    if record.secret is None or record.seating is None:
        return False
    return seat_draw.draw(record.secret, record.request) == record.seating
