"""Who holds a table's host role: the host's handover, and the next host when the host leaves
or stays away.

The host is table state (``Table.host_player_id``, changed by ``HostChanged``).
The host hands the role to another seated human; a host who leaves hands it to
the next human in seat order, found here after the command that made them
leave. A host whose seat no gateway reports connected, while another person's
is, is away (:func:`away_successor`): when that lasts (the timer's
``host_away`` wait) the role passes to the next connected person in seat order.
Pure: the table host appends what these functions return.
"""

from __future__ import annotations

from president.hosting.events import HostChanged
from president.hosting.presence import connected_seats
from president.hosting.projection import Table, departure_of
from president.rules.errors import ErrorCode, Rejected


def is_present_human(table: Table, seat: int) -> bool:
    """Whether a person (not a bot) sits in ``seat`` and has not left it."""
    occupant = table.game.seats[seat]
    return occupant.occupied and not occupant.is_bot and not occupant.leaving


def host_seat(table: Table) -> int | None:
    """The seat the host holds (or held, when they left), if any."""
    for index, occupant in enumerate(table.game.seats):
        if occupant.player == table.host_player_id and table.host_player_id:
            return index
    departure = departure_of(table, table.host_player_id)
    return departure.seat if departure is not None else None


def host_has_left(table: Table) -> bool:
    """Whether the host left the table (or their seat, which a bot finishes)."""
    host = table.host_player_id
    if not host:
        return False
    for occupant in table.game.seats:
        if occupant.player == host:
            return occupant.leaving
    return departure_of(table, host) is not None


def successor(table: Table) -> HostChanged | None:
    """The host change due now: the next human after a host who left (None: none due)."""
    if not host_has_left(table):
        return None
    start = host_seat(table)
    count = len(table.game.seats)
    first = 0 if start is None else start + 1
    for step in range(count):
        seat = (first + step) % count
        if is_present_human(table, seat):
            player = table.game.seats[seat].player
            assert player is not None
            return HostChanged(player, table.host_player_id, automatic=True)
    return None


def away_successor(table: Table) -> HostChanged | None:
    """The host change due if the host stays away: the next connected person after the
    host's seat, while the host sits there unconnected (None: the host is connected, has
    left, or nobody else is connected)."""
    start = host_seat(table)
    if start is None or host_has_left(table):
        return None
    connected = connected_seats(table.presence)
    if start in connected:
        return None
    count = len(table.game.seats)
    for step in range(1, count):
        seat = (start + step) % count
        if seat in connected and is_present_human(table, seat):
            player = table.game.seats[seat].player
            assert player is not None
            return HostChanged(player, table.host_player_id, automatic=True)
    return None


def has_humans(table: Table) -> bool:
    """Whether any person still sits at the table."""
    return any(is_present_human(table, seat) for seat in range(len(table.game.seats)))


def handover(table: Table, seat: int) -> HostChanged:
    """The host hands the role to the human in ``seat``; Rejected when nobody can take it."""
    seats = table.game.seats
    if not 0 <= seat < len(seats) or not seats[seat].occupied:
        raise Rejected(ErrorCode.NO_SUCH_SEAT, f"nobody sits in seat {seat}")
    occupant = seats[seat]
    if occupant.player == table.host_player_id:
        raise Rejected(ErrorCode.ALREADY_HOST, f"{occupant.display_name} is the host already")
    if occupant.is_bot:
        raise Rejected(ErrorCode.HOST_MUST_BE_HUMAN, "a bot cannot be the host: pick a person")
    if occupant.leaving:
        raise Rejected(
            ErrorCode.HOST_MUST_BE_HUMAN,
            f"{occupant.display_name} left the table: pick a person who is still playing",
        )
    assert occupant.player is not None
    return HostChanged(occupant.player, table.host_player_id, automatic=False)
