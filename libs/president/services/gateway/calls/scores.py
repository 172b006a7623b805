"""GetScores: the current game's totals from the table, the finished games from scoring,
read once scoring has caught up with the table.

Scoring follows the table's events on JetStream, a little behind the table.
A GetScores right after a game's last change must include that game: it
waits (a short while, polling) until scoring's read model has processed the
version the table view is at, then reads the finished games. After Back to
lobby there is no current game: the seats' totals are not shown as current.
"""

from __future__ import annotations

import asyncio
import time

from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.services.gateway.upstream.ports import ScoringPort

#: The longest GetScores waits for scoring to catch up before answering with what it has.
CATCH_UP_SECONDS = 3.0
POLL_SECONDS = 0.02


async def caught_up(
    scoring: ScoringPort, table_id: str, version: int, seconds: float = CATCH_UP_SECONDS
) -> bool:
    """Wait until scoring has processed ``version`` of the table; whether it did in time."""
    deadline = time.monotonic() + seconds
    while True:
        if await scoring.processed_version(table_id) >= version:
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(POLL_SECONDS)


async def scores(scoring: ScoringPort, view: gpb.TableView) -> pb.GetScoresResponse:
    """The scores of the table ``view`` shows, with every game finished by its version."""
    out = pb.GetScoresResponse()
    in_game = view.phase != "lobby"
    for seat in view.seats:
        if seat.occupied or (in_game and seat.score):
            out.scores.append(
                pb.SeatScore(
                    seat=seat.seat,
                    display_name=seat.display_name,
                    total=seat.score if in_game else 0,
                )
            )
    if view.HasField("round") and in_game:
        over = view.round.phase == "over"
        out.rounds_played = view.round.round_no if over else max(view.round.round_no - 1, 0)
    await caught_up(scoring, view.table_id, view.version)
    for game in await scoring.game_results(view.table_id):
        out.games.append(
            pb.FinishedGame(
                game_no=game.game_no,
                winners=game.winners,
                stopped=game.stopped,
                totals=game.totals,
            )
        )
    return out
