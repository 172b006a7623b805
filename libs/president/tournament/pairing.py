"""Who the next round draws, and the draw request the seat draw port is given.

- **Swiss**: every entrant who has not retired, including late arrivals (an
  entrant who entered after the start, while the window was open, is drawn
  from the next round committed after their entry, with no points for the
  rounds before). The first round is drawn as the host chose (at random or
  by rating bands); every later one by the ``swiss`` method, given each
  entrant's points and every pair who already shared a table, so that it seats
  like points together and repeats no co-seating where it can avoid one.
- **Elimination**: the first round draws every entrant; each later round the
  entrants who advanced from the round before
  (:func:`president.tournament.scoring.advancing`), drawn as the first round was.

A tournament has no round left once it played its ``rounds``, once an
elimination played a round at a single table (its final), or once fewer than
two entrants remain to draw.
"""

from __future__ import annotations

from itertools import combinations

from president.tournament.port import DrawEntrant, DrawRequest
from president.tournament.scoring import advancing
from president.tournament.standings import points_by_entrant
from president.tournament.state import Entrant, RoundRecord, Tournament


def drawable(state: Tournament) -> tuple[Entrant, ...]:
    """The entrants the next round seats, in the order they entered."""
    active = tuple(e for e in state.entrants if not e.retired)
    if state.settings.format == "swiss" or not state.rounds:
        return active
    last = state.rounds[-1]
    out = {e.account_id for e in state.entrants if e.retired}
    through: set[str] = set()
    for table, places in zip(last.seating or (), last.places, strict=True):
        if places is not None:
            through.update(advancing(table, places, out))
    return tuple(e for e in active if e.account_id in through)


def met_before(rounds: tuple[RoundRecord, ...]) -> frozenset[frozenset[str]]:
    """Every pair of entrants who shared a table in ``rounds``."""
    pairs: set[frozenset[str]] = set()
    for record in rounds:
        for table in record.seating or ():
            seated = sorted(a for a in table if a is not None)
            pairs.update(frozenset(pair) for pair in combinations(seated, 2))
    return frozenset(pairs)


def draw_method(state: Tournament, round_no: int) -> str:
    """How round ``round_no`` is drawn: Swiss after the first round of a Swiss tournament."""
    settings = state.settings
    return "swiss" if settings.format == "swiss" and round_no > 1 else settings.first_draw


def draw_request(state: Tournament) -> DrawRequest:
    """The request for the next round's draw, as the tournament stands now."""
    round_no = len(state.rounds) + 1
    points = points_by_entrant(state)
    entrants = tuple(
        DrawEntrant(e.account_id, points.get(e.account_id, 0), e.rating_milli)
        for e in drawable(state)
    )
    return DrawRequest(
        tournament_id=state.tournament_id,
        round=round_no,
        method=draw_method(state, round_no),
        table_size=state.settings.table_size,
        entrants=entrants,
        met_before=met_before(state.rounds),
    )


def all_rounds_played(state: Tournament) -> bool:
    """Every round the format holds has been played (not counting entrants left)."""
    if len(state.rounds) >= state.settings.rounds:
        return True
    last = state.rounds[-1] if state.rounds else None
    final = last is not None and last.seating is not None and len(last.seating) == 1
    return state.settings.format == "elimination" and final


def rounds_remain(state: Tournament) -> bool:
    """Whether the tournament has a round left to play (this module's docstring)."""
    return not all_rounds_played(state) and len(drawable(state)) >= 2
