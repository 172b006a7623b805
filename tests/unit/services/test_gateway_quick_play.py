"""QuickPlay's choice: the open public table of the preset with the fewest free seats; the
next best when a table fills up first; a new public table when none is left."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from president.gateway.v1 import gateway_pb2 as pb
from president.servicekit.errors import Code, ServiceError
from president.servicekit.identity import Identity
from president.services.gateway.calls.quick_play import QuickPlay, best_tables
from president.services.gateway.calls.refused import Refused
from president.table.v1 import table_pb2 as tpb

ADA = Identity("g-ada", "Ada", "guest", "s-1", 2_000_000_000)


def table(table_id: str, seated: int, seats: int = 4, **kw: Any) -> tpb.TableSummary:
    fields = {"visibility": "public", "phase": "lobby"} | kw
    return tpb.TableSummary(table_id=table_id, seated=seated, seat_count=seats, **fields)


class Tables:
    def __init__(self, found: list[tpb.TableSummary]) -> None:
        self.found = found
        self.asked: list[tpb.ListTablesRequest] = []

    async def list_tables(self, request: tpb.ListTablesRequest) -> list[tpb.TableSummary]:
        self.asked.append(request)
        return self.found


class Seats:
    """Joins refused for the tables in ``full``; creates table "new"."""

    def __init__(self, full: dict[str, Exception]) -> None:
        self.full = full
        self.joined: list[str] = []
        self.created: list[pb.CreateTableRequest] = []

    async def join_table(self, identity: Identity, request: pb.JoinTableRequest) -> Any:
        self.joined.append(request.table_id)
        if request.table_id in self.full:
            raise self.full[request.table_id]
        return pb.JoinTableResponse(seat=2, player_id=identity.account_id)

    async def create_table(self, identity: Identity, request: pb.CreateTableRequest) -> Any:
        self.created.append(request)
        return pb.CreateTableResponse(table_id="new", seat=0, player_id=identity.account_id)


def play(found: list[tpb.TableSummary], full: dict[str, Exception]) -> tuple[Any, Seats]:
    seats = Seats(full)
    quick = QuickPlay(Tables(found), seats)  # type: ignore[arg-type]
    request = pb.QuickPlayRequest(preset="club", display_name="Ada")
    return asyncio.run(quick.quick_play(ADA, request)), seats


def test_the_best_table_has_the_fewest_free_seats_and_is_open_and_public() -> None:
    found = [
        table("a", 1),
        table("b", 3),
        table("c", 2),
        table("d", 3, visibility="private"),
        table("e", 3, phase="round"),
        table("f", 4),
    ]
    assert [t.table_id for t in best_tables(found)] == ["b", "c", "a"]


def test_quick_play_joins_the_best_table() -> None:
    answer, seats = play([table("a", 1), table("b", 3)], {})
    assert (answer.table_id, answer.seat, answer.created) == ("b", 2, False)
    assert seats.joined == ["b"] and seats.created == []


def test_a_table_that_filled_up_first_moves_on_to_the_next_best() -> None:
    started = ServiceError(Code.FAILED_PRECONDITION, "GAME_STARTED", "the game started")
    answer, seats = play(
        [table("a", 1), table("b", 3), table("c", 2)],
        {"b": Refused("TABLE_FULL", "every seat is taken"), "c": started},
    )
    assert answer.table_id == "a" and seats.joined == ["b", "c", "a"]


def test_no_open_table_opens_a_public_one_of_the_preset() -> None:
    answer, seats = play([table("a", 1, phase="round")], {})
    assert (answer.table_id, answer.seat, answer.created) == ("new", 0, True)
    (created,) = seats.created
    assert created.options.preset == "club" and created.visibility == pb.VISIBILITY_PUBLIC


def test_an_unknown_preset_is_refused_and_nothing_is_joined() -> None:
    seats = Seats({})
    quick = QuickPlay(Tables([table("a", 1)]), seats)  # type: ignore[arg-type]
    with pytest.raises(ServiceError) as refused:
        asyncio.run(quick.quick_play(ADA, pb.QuickPlayRequest(preset="chess", display_name="A")))
    assert refused.value.reason == "INVALID_PRESET"
    assert seats.joined == [] and seats.created == []
