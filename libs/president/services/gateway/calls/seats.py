"""Setting a table up: creating it, taking seats, adding and removing bots, starting,
handing the host role over.

Each is a command to the table service
(:class:`~president.services.gateway.calls.commands.Commands`), which checks
every right against the table's state: the host's, a seat's. A free seat is
looked up in this replica's copy of the table and taken; a seat someone else
took first is tried again with the next free one.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable

from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.seat_views import seat_of
from president.hosting.visibility import PRACTICE, VISIBILITIES
from president.rules.levels import bot_player_id
from president.servicekit.errors import ServiceError, denied
from president.servicekit.identity import Identity
from president.services.gateway.calls import bot_levels, checks
from president.services.gateway.calls.commands import Commands
from president.services.gateway.calls.refused import Refused
from president.services.gateway.calls.versions import expected_version
from president.services.gateway.streams.feed import FeedHub, TableFeed
from president.services.gateway.upstream.ports import TablePort
from president.table.v1 import table_pb2 as tpb

#: The proto's visibilities by name (unspecified: practice).
VISIBILITY_NAMES = {
    pb.VISIBILITY_UNSPECIFIED: PRACTICE,
    **{pb.Visibility.Value(f"VISIBILITY_{name.upper()}"): name for name in VISIBILITIES},
}
SEAT_ATTEMPTS = 4


class Seats:
    """The calls that set a table up and change who sits there."""

    def __init__(self, tables: TablePort, hub: FeedHub, commands: Commands) -> None:
        self._tables = tables
        self._hub = hub
        self._commands = commands

    async def create_table(
        self, identity: Identity, request: pb.CreateTableRequest
    ) -> pb.CreateTableResponse:
        """Create a table and seat its creator (the host); practice tables fill up with bots.

        A practice table then waits for StartGame like any other, so the
        creator can open its Watch stream first. With a command id, only the
        first call creates the table and seats its caller as the host; a
        repeat is ALREADY_EXISTS (a client whose answer was lost creates a new
        table).
        """
        name = checks.display_name(request.display_name)
        visibility = VISIBILITY_NAMES.get(request.visibility)
        if visibility is None:
            raise checks.invalid("INVALID_VISIBILITY", "visibility is practice, public or private")
        table_options, bot_level = bot_levels.practice_level(request.options, visibility)
        rules = checks.options(table_options)
        seats = checks.seat_count(request.seat_count, rules)
        if request.command_id:
            # The command id names the table (so a retry creates no second
            # one) but never who holds it: whoever sends a command id first
            # gets the host's seat; a repeat, by the same client or by anyone
            # who guessed the id, is refused TABLE_EXISTS.
            table_id = self._commands.derived("table", checks.command_id(request.command_id))[:12]
        else:
            table_id = secrets.token_hex(6)
        player_id = identity.account_id
        try:
            created = await self._tables.create_table(
                tpb.CreateTableRequest(
                    table_id=table_id,
                    options=gpb.TableOptions(
                        preset=rules.preset, options=dict(table_options.options.items())
                    ),
                    seat_count=seats,
                    visibility=visibility,
                    host_player_id=player_id,
                    name=checks.table_name(request.name),
                    # Fresh each call: a repeat must not count as the same append.
                    command_id=f"create:{secrets.token_hex(12)}",
                )
            )
        except ServiceError as error:
            if request.command_id and error.reason == "TABLE_EXISTS":
                raise Refused(
                    "TABLE_EXISTS",
                    "a table was created with this command id already; its host's seat went "
                    "to that first call: create a table with a new command id",
                ) from None
            raise
        table_id = created.table_id or table_id
        await self._commands.sit(
            table_id, 0, player_id, name, False, f"{table_id}/sit-host", player_id
        )
        if visibility == PRACTICE:
            for seat in range(1, seats):
                await self._commands.sit(
                    table_id,
                    seat,
                    bot_player_id(bot_level, str(seat)),
                    f"Bot {seat}",
                    True,
                    f"{table_id}/sit-bot-{seat}",
                    player_id,
                )
        return pb.CreateTableResponse(table_id=table_id, seat=0, player_id=player_id)

    async def join_table(
        self, identity: Identity, request: pb.JoinTableRequest
    ) -> pb.JoinTableResponse:
        """Take a seat (the one asked for, or the first free one) at a public or private table.

        An account that holds a seat there already gets that seat back (a
        player whose token expired logs in again and joins: same account).
        """
        table_id = checks.table_id(request.table_id)
        name = checks.display_name(request.display_name)
        feed = await self._hub.feed(table_id)
        player_id = identity.account_id
        await feed.catch_up()
        held = seat_of(feed.table.game, player_id)
        if held is not None:
            return pb.JoinTableResponse(seat=held, player_id=player_id)
        if feed.table.visibility == PRACTICE:
            raise denied("PRACTICE_TABLE", "a practice table seats only its creator and bots")
        wanted = request.seat if request.HasField("seat") else None
        seat = await self._take_seat(
            feed,
            wanted,
            lambda seat: self._commands.sit(
                table_id, seat, player_id, name, False, f"join-{secrets.token_hex(8)}", player_id
            ),
        )
        return pb.JoinTableResponse(seat=seat, player_id=player_id)

    async def add_bot(self, identity: Identity, request: pb.AddBotRequest) -> pb.AddBotResponse:
        """Host: a bot at the level asked for (basic by default) takes a free seat (the table
        service checks the host)."""
        table_id = checks.table_id(request.table_id)
        level = checks.bot_level(request.level)
        feed = await self._hub.feed(table_id)
        wanted = request.seat if request.HasField("seat") else None
        bot = bot_player_id(level, secrets.token_hex(4))

        async def sit(seat: int) -> None:
            await self._commands.sit(
                table_id,
                seat,
                bot,
                f"Bot {seat}",
                True,
                f"add-{bot}",
                identity.account_id,
                expected_version(request),
            )

        seat = await self._take_seat(feed, wanted, sit)
        return pb.AddBotResponse(seat=seat)

    async def remove_seat(
        self, identity: Identity, request: pb.RemoveSeatRequest
    ) -> pb.RemoveSeatResponse:
        """Host: remove a bot or a player (a bot finishes their round); the table service
        checks the host and the seat."""
        table_id = checks.table_id(request.table_id)
        feed = await self._hub.feed(table_id)
        await self._commands.run(
            identity,
            request,
            gpb.Command(leave=gpb.Leave(seat=request.seat, removed=True)),
            f"remove-{request.seat}-v{feed.version}",
        )
        return pb.RemoveSeatResponse()

    async def start_game(
        self, identity: Identity, request: pb.StartGameRequest
    ) -> pb.StartGameResponse:
        """Start: the host; at a public or practice table any seated player (the table
        service decides)."""
        table_id = checks.table_id(request.table_id)
        await self._hub.feed(table_id)
        await self._commands.run(
            identity,
            request,
            gpb.Command(start_game=gpb.StartGame()),
            checks.command_id(request.command_id),
        )
        return pb.StartGameResponse()

    async def hand_over_host(
        self, identity: Identity, request: pb.HandOverHostRequest
    ) -> pb.HandOverHostResponse:
        """Host: hand the host role to the person in a seat (the table service decides)."""
        table_id = checks.table_id(request.table_id)
        command_id = checks.command_id(request.command_id) or f"host-{secrets.token_hex(6)}"
        await self._hub.feed(table_id)
        version = await self._commands.run(
            identity,
            request,
            gpb.Command(hand_over_host=gpb.HandOverHost(seat=request.seat)),
            command_id,
        )
        return pb.HandOverHostResponse(version=version)

    async def mute_seat(
        self, identity: Identity, request: pb.MuteSeatRequest
    ) -> pb.MuteSeatResponse:
        """Host: mute or unmute the person in a seat (the table service decides)."""
        table_id = checks.table_id(request.table_id)
        command_id = checks.command_id(request.command_id) or f"mute-{secrets.token_hex(6)}"
        await self._hub.feed(table_id)
        version = await self._commands.run(
            identity,
            request,
            gpb.Command(mute_seat=gpb.MuteSeat(seat=request.seat, muted=request.muted)),
            command_id,
        )
        return pb.MuteSeatResponse(version=version)

    async def _take_seat(
        self, feed: TableFeed, wanted: int | None, sit: Callable[[int], Awaitable[object]]
    ) -> int:
        """Sit in ``wanted``, or in the first free seat (trying the next one after a race)."""
        if wanted is not None:
            await sit(wanted)
            return wanted
        for _attempt in range(SEAT_ATTEMPTS):
            await feed.catch_up()
            free = [i for i, seat in enumerate(feed.table.game.seats) if not seat.occupied]
            if not free:
                raise Refused("TABLE_FULL", "every seat is taken")
            try:
                await sit(free[0])
            except ServiceError as error:
                if error.reason == "SEAT_TAKEN":
                    continue
                raise
            return free[0]
        raise Refused("SEAT_TAKEN", "others took the free seats first: try again")
