"""The table service's rights, read from the table's state: seat commands from the person
seated there, host actions from the host of the moment, the precise refusal of each case."""

from __future__ import annotations

import pytest

from president.game.v1 import game_pb2 as gpb
from president.hosting.events import HostChanged, TableCreated
from president.hosting.projection import Table, fold, table_from_created
from president.hosting.visibility import PRIVATE, PUBLIC
from president.rules import game as g
from president.servicekit.errors import Code, ServiceError
from president.services.table.commands import translate
from president.services.table.rights import check_actor

PASS_1 = translate(gpb.Command(**{"pass": gpb.Pass(seat=1)}))
NEXT_ROUND = translate(gpb.Command(next_round=gpb.NextRound()))
START = translate(gpb.Command(start_game=gpb.StartGame()))
REMOVE_1 = translate(gpb.Command(leave=gpb.Leave(seat=1, removed=True)))


def table(*events: object, visibility: str = PUBLIC) -> Table:
    """Ann (the host, seat 0), Bob (seat 1), a bot (seat 2), then ``events``."""
    created = TableCreated("t1", "classic", (), "ann", visibility, 4)
    folded = table_from_created(created)
    seated = (
        g.SeatTaken(0, "ann", False, "Ann"),
        g.SeatTaken(1, "bob", False, "Bob"),
        g.SeatTaken(2, "b2", True, "Bot"),
    )
    for event in (*seated, *events):
        folded = fold(folded, event, folded.version + 1)  # type: ignore[arg-type]
    return folded


def refusal(translated: object, player: str, at: Table) -> tuple[Code, str, str]:
    with pytest.raises(ServiceError) as refused:
        check_actor(translated, gpb.Actor(player_id=player), at)  # type: ignore[arg-type]
    error = refused.value
    return error.status, error.reason, error.message


def test_a_seat_command_comes_from_the_person_seated_there() -> None:
    check_actor(PASS_1, gpb.Actor(player_id="bob", seat=1), table())
    check_actor(PASS_1, gpb.Actor(player_id="server", seat=-1), table())
    status, reason, _ = refusal(PASS_1, "ann", table())
    assert (status, reason) == (Code.PERMISSION_DENIED, "NOT_YOUR_SEAT")
    # The actor's seat field is not trusted: the table says who sits where.
    with pytest.raises(ServiceError, match="NOT_YOUR_SEAT"):
        check_actor(PASS_1, gpb.Actor(player_id="ann", seat=1), table())
    assert refusal(PASS_1, "zed", table())[1] == "READ_ONLY"


def test_a_player_who_left_or_was_removed_is_told_which() -> None:
    left = table(g.SeatLeft(1, "bob", False))
    assert refusal(PASS_1, "bob", left)[1:] == (
        "SEAT_LEFT",
        "you left this table: you no longer act here",
    )
    removed = table(g.SeatLeft(1, "bob", True), g.SeatFreed(1))
    status, reason, message = refusal(PASS_1, "bob", removed)
    assert (status, reason) == (Code.PERMISSION_DENIED, "SEAT_REMOVED")
    assert "Ann (the host) removed you" in message


def test_host_actions_come_from_the_host_of_the_moment() -> None:
    check_actor(NEXT_ROUND, gpb.Actor(player_id="ann"), table())
    status, reason, message = refusal(NEXT_ROUND, "bob", table())
    assert (status, reason) == (Code.PERMISSION_DENIED, "NOT_HOST")
    assert "(Ann)" in message
    handed = table(HostChanged("bob", "ann", False))
    check_actor(NEXT_ROUND, gpb.Actor(player_id="bob"), handed)
    assert refusal(NEXT_ROUND, "ann", handed)[1] == "NOT_HOST"
    # A host who left has no host right, even before the role moves on.
    assert refusal(NEXT_ROUND, "ann", table(g.SeatLeft(0, "ann", False)))[1] == "SEAT_LEFT"


def test_removal_and_bots_are_the_hosts() -> None:
    check_actor(REMOVE_1, gpb.Actor(player_id="ann"), table())
    assert refusal(REMOVE_1, "bob", table())[1] == "NOT_HOST"
    remove_self = translate(gpb.Command(leave=gpb.Leave(seat=0, removed=True)))
    assert refusal(remove_self, "ann", table())[1] == "OWN_SEAT"
    bot = translate(gpb.Command(sit_down=gpb.SitDown(seat=3, player_id="b3", is_bot=True)))
    check_actor(bot, gpb.Actor(player_id="ann"), table())
    assert refusal(bot, "bob", table())[1] == "NOT_HOST"
    other = translate(gpb.Command(sit_down=gpb.SitDown(seat=3, player_id="zed")))
    assert refusal(other, "bob", table())[1] == "NOT_YOUR_SEAT"
    check_actor(other, gpb.Actor(player_id="zed"), table())


def test_who_starts_the_game() -> None:
    check_actor(START, gpb.Actor(player_id="bob"), table())  # public: any seated person
    assert refusal(START, "zed", table())[1] == "READ_ONLY"
    private = table(visibility=PRIVATE)
    check_actor(START, gpb.Actor(player_id="ann"), private)
    assert refusal(START, "bob", private)[1] == "NOT_HOST"
