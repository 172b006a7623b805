"""The end of a round: places, points, totals, and whether the game is over."""

from __future__ import annotations

from president.rules.options import Options
from president.rules.round.events import Event, PlayerWentOut, RoundEnded
from president.rules.round.state import RoundState


def round_end(state: RoundState, hands: list[int], events: list[Event]) -> RoundEnded:
    """The :class:`RoundEnded` of the play that leaves one holder: ``events`` are its others."""
    finished = list(state.finished)
    penalised = list(state.penalised)
    for event in events:
        if isinstance(event, PlayerWentOut):
            finished.append(event.seat)
            if event.penalised:
                penalised.append(event.seat)
    remaining = [seat for seat in state.players if hands[seat]]
    standings = tuple(
        [seat for seat in finished if seat not in penalised] + remaining + penalised[::-1]
    )
    return round_result(state, standings)


def round_result(state: RoundState, standings: tuple[int, ...]) -> RoundEnded:
    """Points, totals and the game's end for a round that finished in ``standings``."""
    options = state.options
    points = [0] * state.seat_count
    for place, seat in enumerate(standings):
        points[seat] = place_points(options.scoring, place, len(standings))
    totals = tuple(total + earned for total, earned in zip(state.scores, points, strict=True))
    game_over, winners = game_end(options, state.round_no, totals, state.players)
    return RoundEnded(standings, tuple(points), totals, game_over, winners)


def place_points(scoring: str, place: int, players: int) -> int:
    """Points for ``place`` (0 = first) among ``players``."""
    if scoring == "below":
        return players - 1 - place
    role = role_key(place, players)
    if scoring == "classic":
        return {"top": 2, "second": 1}.get(role, 0)
    # house: President 3, Vice 2, each Neutral 1, Vice-asshole and Asshole 0.
    return {"top": 3, "second": 2, "middle": 1}.get(role, 0)


def role_key(place: int, players: int) -> str:
    """``top``, ``second``, ``middle``, ``second_bottom`` or ``bottom`` for a place."""
    if place == 0:
        return "top"
    if place == players - 1:
        return "bottom"
    if players >= 4 and place == 1:
        return "second"
    if players >= 4 and place == players - 2:
        return "second_bottom"
    return "middle"


def game_end(
    options: Options, round_no: int, totals: tuple[int, ...], players: tuple[int, ...]
) -> tuple[bool, tuple[int, ...]]:
    """Whether the game ends after ``round_no`` with these totals, and its winners."""
    best = max(totals[seat] for seat in players)
    leaders = tuple(seat for seat in players if totals[seat] == best)
    target = options.target_score
    if target is not None:
        if best >= target and len(leaders) == 1:
            return True, leaders
        return False, ()
    limit = options.round_limit
    if limit is not None and round_no >= limit:
        return True, leaders
    return False, ()
