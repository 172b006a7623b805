"""What the gateway does for each call: rights, input checks, then the table service.

The servicer (:mod:`president.services.gateway.handlers`) verifies the token and hands
the claims here. Seat commands act for the seat the token's player holds now
(found in the table's feed, so a seat change between rounds follows the
player). The gateway decides no right itself: the table service checks every
command, host actions included, against the table's state
(:mod:`president.services.table.rights`).
Commands carry the client's command id, scoped by player, so a retry with the
same id runs once. Refusals from the table service pass through unchanged.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.seat_views import seat_of
from president.hosting.visibility import PRACTICE, PUBLIC, VISIBILITIES
from president.servicekit.errors import ServiceError
from president.services.gateway import checks
from president.services.gateway.auth import (
    AUDITOR,
    HOST,
    PLAYER,
    SPECTATOR,
    Claims,
    Tokens,
    denied,
    new_player_id,
    require_checker,
    require_writer,
)
from president.services.gateway.dealcheck import check_deal
from president.services.gateway.feed import FeedHub, TableFeed
from president.services.gateway.scores import scores
from president.services.gateway.upstream import ScoringPort, TablePort
from president.services.gateway.watch import seat_resolver, watch, watch_session
from president.table.v1 import table_pb2 as tpb

T = TypeVar("T")
#: The proto's visibilities by name (unspecified: practice).
VISIBILITY_NAMES = {
    pb.VISIBILITY_UNSPECIFIED: PRACTICE,
    **{pb.Visibility.Value(f"VISIBILITY_{name.upper()}"): name for name in VISIBILITIES},
}
HOST_CHOICES: dict[int, Callable[[], gpb.Command]] = {
    pb.HOST_CHOICE_NEXT_ROUND: lambda: gpb.Command(next_round=gpb.NextRound()),
    pb.HOST_CHOICE_END_GAME: lambda: gpb.Command(end_game=gpb.EndGame()),
    pb.HOST_CHOICE_PLAY_AGAIN: lambda: gpb.Command(play_again=gpb.PlayAgain()),
    pb.HOST_CHOICE_BACK_TO_LOBBY: lambda: gpb.Command(back_to_lobby=gpb.BackToLobby()),
}
SEAT_ATTEMPTS = 4


class Refused(Exception):
    """A call the gateway refuses by its own rules: a stable reason and a sentence.

    The entrypoint gives it its transport status
    (:data:`president.services.gateway.handlers.REFUSED_STATUS`).
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


def _reason(error: ServiceError, *reasons: str) -> bool:
    return error.reason in reasons


class Gateway:
    """The public API's logic, behind the servicer and in front of the table service."""

    def __init__(
        self, tables: TablePort, scoring: ScoringPort, tokens: Tokens, hub: FeedHub, id_key: bytes
    ) -> None:
        self._tables = tables
        self._scoring = scoring
        self._tokens = tokens
        self._hub = hub
        self._id_key = id_key

    # -- tables and seats ---------------------------------------------------------
    async def create_table(self, request: pb.CreateTableRequest) -> pb.CreateTableResponse:
        """Create a table and seat its creator (the host); practice tables fill up with bots.

        A practice table then waits for StartGame like any other, so the
        creator can open its Watch stream first. With a command id, only the
        first call creates the table and gets the host's token; a repeat is
        ALREADY_EXISTS (a client whose answer was lost creates a new table).
        """
        name = checks.display_name(request.display_name)
        rules = checks.options(request.options)
        seats = checks.seat_count(request.seat_count, rules)
        visibility = VISIBILITY_NAMES.get(request.visibility)
        if visibility is None:
            raise checks.invalid("INVALID_VISIBILITY", "visibility is practice, public or private")
        if request.command_id:
            # The command id names the table (so a retry creates no second
            # one) but never who holds it: whoever sends a command id first
            # gets the host's seat and token; a repeat, by the same client or
            # by anyone who guessed the id, is refused TABLE_EXISTS.
            table_id = self._derived("table", checks.command_id(request.command_id))[:12]
        else:
            table_id = secrets.token_hex(6)
        player_id = new_player_id()
        try:
            created = await self._tables.create_table(
                tpb.CreateTableRequest(
                    table_id=table_id,
                    options=gpb.TableOptions(
                        preset=rules.preset, options=dict(request.options.options.items())
                    ),
                    seat_count=seats,
                    visibility=visibility,
                    host_player_id=player_id,
                    # Fresh each call: a repeat must not count as the same append.
                    command_id=f"create:{secrets.token_hex(12)}",
                )
            )
        except ServiceError as error:
            if request.command_id and _reason(error, "TABLE_EXISTS"):
                raise Refused(
                    "TABLE_EXISTS",
                    "a table was created with this command id already; its host token went "
                    "to that first call: create a table with a new command id",
                ) from None
            raise
        table_id = created.table_id or table_id
        await self._sit(table_id, 0, player_id, name, False, f"{table_id}/sit-host", player_id)
        if visibility == PRACTICE:
            for seat in range(1, seats):
                await self._sit(
                    table_id,
                    seat,
                    f"bot-{seat}",
                    f"Bot {seat}",
                    True,
                    f"{table_id}/sit-bot-{seat}",
                    player_id,
                )
        token = self._tokens.issue(table_id, player_id, HOST, 0)
        return pb.CreateTableResponse(table_id=table_id, seat=0, token=token, player_id=player_id)

    async def list_tables(self) -> pb.ListTablesResponse:
        """Public tables in the lobby with a free seat."""
        found = await self._tables.list_tables(open_only=True)
        return pb.ListTablesResponse(
            tables=[
                pb.TableSummary(
                    table_id=item.table_id,
                    options=item.options,
                    seated=item.seated,
                    seat_count=item.seat_count,
                )
                for item in found
                if item.visibility == PUBLIC
            ]
        )

    async def join_table(self, request: pb.JoinTableRequest) -> pb.JoinTableResponse:
        """Take a seat (the one asked for, or the first free one) at a public or private table."""
        table_id = checks.table_id(request.table_id)
        name = checks.display_name(request.display_name)
        feed = await self._hub.feed(table_id)
        if feed.table.visibility == PRACTICE:
            raise denied("PRACTICE_TABLE", "a practice table seats only its creator and bots")
        player_id = new_player_id()
        wanted = request.seat if request.HasField("seat") else None
        seat = await self._take_seat(
            feed,
            wanted,
            lambda seat: self._sit(
                table_id, seat, player_id, name, False, f"join-{player_id}-{seat}", player_id
            ),
        )
        token = self._tokens.issue(table_id, player_id, PLAYER, seat)
        return pb.JoinTableResponse(seat=seat, token=token, player_id=player_id)

    async def spectate(self, request: pb.SpectateRequest) -> pb.SpectateResponse:
        """A read-only token for a table that exists."""
        table_id = checks.table_id(request.table_id)
        await self._hub.feed(table_id)
        role = AUDITOR if request.auditor else SPECTATOR
        watcher = f"{role[0]}-{secrets.token_hex(8)}"
        return pb.SpectateResponse(token=self._tokens.issue(table_id, watcher, role))

    async def add_bot(self, claims: Claims, request: pb.AddBotRequest) -> pb.AddBotResponse:
        """Host: a bot takes a free seat (the table service checks the host)."""
        require_writer(claims)
        feed = await self._hub.feed(claims.table_id)
        wanted = request.seat if request.HasField("seat") else None
        bot = f"bot-{secrets.token_hex(4)}"

        async def sit(seat: int) -> None:
            await self._sit(
                claims.table_id, seat, bot, f"Bot {seat}", True, f"add-{bot}", claims.player_id
            )

        seat = await self._take_seat(feed, wanted, sit)
        return pb.AddBotResponse(seat=seat)

    async def remove_seat(
        self, claims: Claims, request: pb.RemoveSeatRequest
    ) -> pb.RemoveSeatResponse:
        """Host: remove a bot or a player (a bot finishes their round); the table service
        checks the host and the seat."""
        require_writer(claims)
        feed = await self._hub.feed(claims.table_id)
        await self._submit(
            claims,
            gpb.Command(leave=gpb.Leave(seat=request.seat, removed=True)),
            f"remove-{request.seat}-v{feed.version}",
            seat=self._host_seat(feed, claims),
        )
        return pb.RemoveSeatResponse()

    async def start_game(
        self, claims: Claims, request: pb.StartGameRequest
    ) -> pb.StartGameResponse:
        """Start: the host; at a public or practice table any seated player (the table
        service decides)."""
        require_writer(claims)
        feed = await self._hub.feed(claims.table_id)
        seat = self._host_seat(feed, claims)
        await self._submit(
            claims,
            gpb.Command(start_game=gpb.StartGame()),
            checks.command_id(request.command_id),
            seat=seat,
        )
        return pb.StartGameResponse()

    # -- plays ------------------------------------------------------------------------
    async def play(self, claims: Claims, request: pb.PlayRequest) -> pb.PlayResponse:
        """Play cards for the token's seat."""
        require_writer(claims)
        cards = checks.cards(request.cards)
        command_id = checks.command_id(request.command_id)

        def command(seat: int) -> gpb.Command:
            play = gpb.PlayCards(seat=seat, cards=cards)
            if request.HasField("trick_version"):
                play.trick_version = request.trick_version
            return gpb.Command(play_cards=play)

        return pb.PlayResponse(version=await self._seat_command(claims, command, command_id))

    async def pass_(self, claims: Claims, request: pb.PassRequest) -> pb.PassResponse:
        """Pass for the token's seat."""
        require_writer(claims)
        command_id = checks.command_id(request.command_id)

        def command(seat: int) -> gpb.Command:
            passing = gpb.Pass(seat=seat)
            if request.HasField("trick_version"):
                passing.trick_version = request.trick_version
            out = gpb.Command()
            getattr(out, "pass").CopyFrom(passing)
            return out

        return pb.PassResponse(version=await self._seat_command(claims, command, command_id))

    async def return_cards(
        self, claims: Claims, request: pb.ReturnCardsRequest
    ) -> pb.ReturnCardsResponse:
        """Return cards in the exchange for the token's seat."""
        require_writer(claims)
        cards = checks.cards(request.cards)
        command_id = checks.command_id(request.command_id)
        version = await self._seat_command(
            claims,
            lambda seat: gpb.Command(return_cards=gpb.ReturnCards(seat=seat, cards=cards)),
            command_id,
        )
        return pb.ReturnCardsResponse(version=version)

    async def react(self, claims: Claims, request: pb.ReactRequest) -> pb.ReactResponse:
        """Show a reaction to the table."""
        require_writer(claims)
        code = checks.reaction(request.reaction)
        await self._seat_command(
            claims,
            lambda seat: gpb.Command(react=gpb.React(seat=seat, reaction=code)),
            secrets.token_hex(8),
        )
        return pb.ReactResponse()

    async def leave(self, claims: Claims, _request: pb.LeaveRequest) -> pb.LeaveResponse:
        """Leave: a bot finishes the round; the token acts no more."""
        require_writer(claims)
        await self._seat_command(
            claims,
            lambda seat: gpb.Command(leave=gpb.Leave(seat=seat)),
            f"leave-{secrets.token_hex(6)}",
        )
        return pb.LeaveResponse()

    async def host_action(
        self, claims: Claims, request: pb.HostActionRequest
    ) -> pb.HostActionResponse:
        """Host: Next round, End the game, Play again, Back to lobby."""
        require_writer(claims)
        choice = HOST_CHOICES.get(request.choice)
        if choice is None:
            raise checks.invalid(
                "INVALID_CHOICE",
                "choose next round, end the game, play again or back to lobby",
            )
        command_id = checks.command_id(request.command_id)
        feed = await self._hub.feed(claims.table_id)
        version = await self._submit(
            claims,
            choice(),
            command_id,
            seat=self._host_seat(feed, claims),
        )
        return pb.HostActionResponse(version=version)

    async def hand_over_host(
        self, claims: Claims, request: pb.HandOverHostRequest
    ) -> pb.HandOverHostResponse:
        """Host: hand the host role to the person in a seat (the table service decides)."""
        require_writer(claims)
        command_id = checks.command_id(request.command_id) or f"host-{secrets.token_hex(6)}"
        feed = await self._hub.feed(claims.table_id)
        version = await self._submit(
            claims,
            gpb.Command(hand_over_host=gpb.HandOverHost(seat=request.seat)),
            command_id,
            seat=self._host_seat(feed, claims),
        )
        return pb.HandOverHostResponse(version=version)

    # -- reading ------------------------------------------------------------------------
    async def get_table(self, claims: Claims) -> pb.GetTableResponse:
        """The table as the token's seat sees it (spectators and auditors: no hand)."""
        return pb.GetTableResponse(view=await self._view(claims))

    async def get_scores(self, claims: Claims) -> pb.GetScoresResponse:
        """The current game's totals (from the table) and finished games (from scoring, once
        it caught up with the table: :mod:`president.services.gateway.scores`)."""
        return await scores(self._scoring, await self._tables.get_table(claims.table_id, None))

    async def check_deal(
        self, claims: Claims, request: pb.CheckDealRequest
    ) -> pb.CheckDealResponse:
        """A finished round's deal, re-created from its secret and compared with the log."""
        require_checker(claims)
        checks.round_number(request.game_no, request.round_no)
        events = await self._tables.read_events(claims.table_id, 0)
        return check_deal(events, request.game_no, request.round_no)

    def watch(self, claims: Claims, request: pb.WatchRequest) -> AsyncIterator[pb.WatchResponse]:
        """The token's view as a stream: a snapshot then every change, or resume after a version."""
        player = None if claims.read_only else claims.player_id
        return watch(self._hub, claims.table_id, request.from_version, seat_resolver(player))

    def watch_session(self, claims: Claims, request: pb.WatchRequest) -> AsyncIterator[bytes]:
        """:meth:`watch`, each change a serialized ``SessionResponse`` (see ``Entry``)."""
        player = None if claims.read_only else claims.player_id
        return watch_session(
            self._hub, claims.table_id, request.from_version, seat_resolver(player)
        )

    # -- internals ------------------------------------------------------------------------
    def _derived(self, what: str, command_id: str) -> str:
        return hmac.new(self._id_key, f"{what}:{command_id}".encode(), hashlib.sha256).hexdigest()

    async def _sit(
        self,
        table_id: str,
        seat: int,
        player_id: str,
        name: str,
        is_bot: bool,
        command_id: str,
        actor: str,
    ) -> int:
        response = await self._tables.submit(
            tpb.ExecuteCommandRequest(
                table_id=table_id,
                command_id=command_id,
                actor=gpb.Actor(player_id=actor, seat=-1 if is_bot else seat),
                command=gpb.Command(
                    sit_down=gpb.SitDown(
                        seat=seat, player_id=player_id, display_name=name, is_bot=is_bot
                    )
                ),
            )
        )
        self._hub.nudge(table_id, response.version, response.committed)
        return response.version

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
                if _reason(error, "SEAT_TAKEN"):
                    continue
                raise
            return free[0]
        raise Refused("SEAT_TAKEN", "others took the free seats first: try again")

    def _host_seat(self, feed: TableFeed, claims: Claims) -> int:
        seat = seat_of(feed.table.game, claims.player_id)
        return -1 if seat is None else seat

    async def _acting_seat(self, claims: Claims, feed: TableFeed, fresh: bool = False) -> int:
        """The seat the token's player holds now, as the feed shows it.

        A player the feed shows no seat for is sent on for seat 0: the table
        service refuses them with the reason its state gives (SEAT_LEFT,
        SEAT_REMOVED, NOT_SEATED), the one place rights are decided.
        """
        if fresh:
            await feed.catch_up()
        seat = seat_of(feed.table.game, claims.player_id)
        if seat is None and not fresh:
            return await self._acting_seat(claims, feed, fresh=True)
        return 0 if seat is None else seat

    async def _seat_command(
        self, claims: Claims, command: Callable[[int], gpb.Command], command_id: str
    ) -> int:
        feed = await self._hub.feed(claims.table_id)
        seat = await self._acting_seat(claims, feed)
        try:
            return await self._submit(claims, command(seat), command_id, seat=seat)
        except ServiceError as error:
            if not _reason(error, "NOT_YOUR_SEAT"):
                raise
            moved = await self._acting_seat(claims, feed, fresh=True)  # seats changed: follow
            if moved == seat:
                raise
            return await self._submit(claims, command(moved), command_id, seat=moved)

    async def _submit(
        self, claims: Claims, command: gpb.Command, command_id: str, *, seat: int
    ) -> int:
        response = await self._tables.submit(
            tpb.ExecuteCommandRequest(
                table_id=claims.table_id,
                command_id=f"{claims.player_id}:{command_id}",
                actor=gpb.Actor(player_id=claims.player_id, seat=seat),
                command=command,
            )
        )
        self._hub.nudge(claims.table_id, response.version, response.committed)
        return response.version

    async def _view(self, claims: Claims) -> gpb.TableView:
        if claims.read_only:
            return await self._tables.get_table(claims.table_id, None)
        feed = self._hub.existing(claims.table_id)
        seat = claims.seat
        if feed is not None and feed.current is not None:
            found = seat_of(feed.table.game, claims.player_id)
            seat = found if found is not None else seat
        view = await self._tables.get_table(claims.table_id, seat)
        if _holds(view, seat, claims.player_id):
            return view
        found = next((s.seat for s in view.seats if s.player_id == claims.player_id), None)
        if found is not None:
            view = await self._tables.get_table(claims.table_id, found)
            if _holds(view, found, claims.player_id):
                return view
        return await self._tables.get_table(claims.table_id, None)


def _holds(view: gpb.TableView, seat: int | None, player_id: str) -> bool:
    return seat is not None and seat < len(view.seats) and view.seats[seat].player_id == player_id


__all__ = ["Gateway", "Refused"]
