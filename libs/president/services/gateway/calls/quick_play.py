"""QuickPlay: a seat at the best open public table of a preset, or a new public table.

The best table is the one in the lobby (public, waiting for its game, a
seat free) with the fewest free seats: its game starts soonest, and the
players already waiting there wait least. Equal tables go by the directory's
order (the table id). A seat taken by someone else first, or a game started
meanwhile, moves on to the next best table; when none is left, a new public
table of the preset is opened with the caller as its host. Every client gets
the same choice, made here.
"""

from __future__ import annotations

from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.visibility import PUBLIC
from president.rules.options import PRESETS
from president.servicekit.errors import Code, ServiceError
from president.servicekit.identity import Identity
from president.services.gateway.calls import checks
from president.services.gateway.calls.refused import Refused
from president.services.gateway.calls.seats import Seats
from president.services.gateway.upstream.ports import TablePort
from president.table.v1 import table_pb2 as tpb

#: Open tables of the preset looked at (the directory's first, by table id).
SCANNED = 200
#: Tables tried before opening a new one (each may have filled up meanwhile).
TRIES = 3
#: Refusals of a join that mean the table filled up or started first: try the next.
RACES = frozenset({Code.FAILED_PRECONDITION, Code.ABORTED, Code.RESOURCE_EXHAUSTED})
#: The name of a table quick play opens.
TABLE_NAME = "Quick play"


def best_tables(found: list[tpb.TableSummary]) -> list[tpb.TableSummary]:
    """The open public tables among ``found``, best first: fewest free seats, then the
    directory's order."""
    open_tables = [
        table
        for table in found
        if table.visibility == PUBLIC and table.phase == "lobby" and table.seated < table.seat_count
    ]
    return sorted(open_tables, key=lambda table: table.seat_count - table.seated)


class QuickPlay:
    """Seats a caller at the best open table of a preset, or opens one."""

    def __init__(self, tables: TablePort, seats: Seats) -> None:
        self._tables = tables
        self._seats = seats

    async def quick_play(
        self, identity: Identity, request: pb.QuickPlayRequest
    ) -> pb.QuickPlayResponse:
        """Join the best open table of ``request.preset`` or open a new public one."""
        if request.preset not in PRESETS:
            raise checks.invalid(
                "INVALID_PRESET",
                f"there is no preset {request.preset!r}: the presets are {', '.join(PRESETS)}",
            )
        name = checks.display_name(request.display_name)
        found = await self._tables.list_tables(
            tpb.ListTablesRequest(
                open_only=True,
                listed_only=True,
                preset=request.preset,
                min_free_seats=1,
                limit=SCANNED,
            )
        )
        for table in best_tables(found)[:TRIES]:
            try:
                joined = await self._seats.join_table(
                    identity, pb.JoinTableRequest(table_id=table.table_id, display_name=name)
                )
            except Refused:
                continue  # TABLE_FULL, SEAT_TAKEN: filled up first, the next best
            except ServiceError as error:
                if error.status in RACES:
                    continue  # started first: the next best
                raise
            return pb.QuickPlayResponse(
                table_id=table.table_id, seat=joined.seat, player_id=joined.player_id
            )
        created = await self._seats.create_table(
            identity,
            pb.CreateTableRequest(
                options=gpb.TableOptions(preset=request.preset),
                visibility=pb.VISIBILITY_PUBLIC,
                display_name=name,
                name=TABLE_NAME,
            ),
        )
        return pb.QuickPlayResponse(
            table_id=created.table_id, seat=created.seat, player_id=created.player_id, created=True
        )
