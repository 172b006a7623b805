"""What the gateway does for each call: rights, input checks, then the table service.

The servicer (:mod:`president.services.gateway.api.handlers`) verifies the token and hands
the identity here; a table-scoped request names its table (``table_id``).
Every command goes to the table service as (account, table, command) in one
call (:meth:`Gateway._submit`). The gateway decides no seat and no right
itself: a seat command names no seat, and the table service acts for the seat
the account holds at that moment, checks every command, host actions
included, against the table's state (:mod:`president.services.table.rights`),
and reads the cards (:func:`president.servicekit.checks.cards`). Commands
carry the client's command id, scoped by account, so a retry with the same id
runs once. Refusals from the table service pass through unchanged.
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
from president.hosting.visibility import PRACTICE, VISIBILITIES
from president.rules.levels import bot_player_id
from president.servicekit.errors import ServiceError, denied, read_only
from president.servicekit.identity import Identity
from president.services.gateway.calls import bot_levels, checks
from president.services.gateway.calls.activity import activity_page, activity_tokens, before_version
from president.services.gateway.calls.countdowns import with_countdown
from president.services.gateway.calls.dealcheck import check_deal
from president.services.gateway.calls.lobby import lobby_page, lobby_tokens
from president.services.gateway.calls.page_tokens import page_size
from president.services.gateway.calls.preview import preview_response
from president.services.gateway.calls.scores import scores
from president.services.gateway.calls.versions import expected_version
from president.services.gateway.streams.feed import FeedHub, TableFeed
from president.services.gateway.streams.presence import Presence
from president.services.gateway.streams.watch import Check, seat_resolver, watch, watch_session
from president.services.gateway.upstream.ports import ScoringPort, TablePort
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
    (:data:`president.services.gateway.api.handlers.REFUSED_STATUS`).
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
        self, tables: TablePort, scoring: ScoringPort, hub: FeedHub, id_key: bytes
    ) -> None:
        self._tables = tables
        self._scoring = scoring
        self._hub = hub
        self._id_key = id_key
        self._pages = activity_tokens(id_key)
        self._lobby_pages = lobby_tokens(id_key)
        #: This replica's id in presence reports (a new one each start).
        self.replica_id = secrets.token_hex(6)
        self._presence = Presence(self._report_presence)

    # -- tables and seats ---------------------------------------------------------
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
            table_id = self._derived("table", checks.command_id(request.command_id))[:12]
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
            if request.command_id and _reason(error, "TABLE_EXISTS"):
                raise Refused(
                    "TABLE_EXISTS",
                    "a table was created with this command id already; its host's seat went "
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
                    bot_player_id(bot_level, str(seat)),
                    f"Bot {seat}",
                    True,
                    f"{table_id}/sit-bot-{seat}",
                    player_id,
                )
        return pb.CreateTableResponse(table_id=table_id, seat=0, player_id=player_id)

    async def list_commitments(
        self, request: pb.ListCommitmentsRequest
    ) -> pb.ListCommitmentsResponse:
        """A page of the public commitment feed: anyone may read and archive it."""
        entries = await self._tables.list_commitments(request.day, request.after_seq, request.limit)
        return pb.ListCommitmentsResponse(entries=entries)

    async def list_tables(self, request: pb.ListTablesRequest) -> pb.ListTablesResponse:
        """The lobby: public tables, filtered, a page at a time (never private or practice)."""
        return await lobby_page(self._tables, request, self._lobby_pages)

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
            lambda seat: self._sit(
                table_id, seat, player_id, name, False, f"join-{secrets.token_hex(8)}", player_id
            ),
        )
        return pb.JoinTableResponse(seat=seat, player_id=player_id)

    async def spectate(
        self, _identity: Identity, request: pb.SpectateRequest
    ) -> pb.SpectateResponse:
        """Whether a table exists to be watched: any identity watches a table it knows."""
        table_id = checks.table_id(request.table_id)
        await self._hub.feed(table_id)
        return pb.SpectateResponse()

    async def add_bot(self, identity: Identity, request: pb.AddBotRequest) -> pb.AddBotResponse:
        """Host: a bot at the level asked for (basic by default) takes a free seat (the table
        service checks the host)."""
        table_id = checks.table_id(request.table_id)
        level = checks.bot_level(request.level)
        feed = await self._hub.feed(table_id)
        wanted = request.seat if request.HasField("seat") else None
        bot = bot_player_id(level, secrets.token_hex(4))

        async def sit(seat: int) -> None:
            await self._sit(
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
        await self._submit(
            identity,
            table_id,
            gpb.Command(leave=gpb.Leave(seat=request.seat, removed=True)),
            f"remove-{request.seat}-v{feed.version}",
            expected_version(request),
        )
        return pb.RemoveSeatResponse()

    async def start_game(
        self, identity: Identity, request: pb.StartGameRequest
    ) -> pb.StartGameResponse:
        """Start: the host; at a public or practice table any seated player (the table
        service decides)."""
        table_id = checks.table_id(request.table_id)
        await self._hub.feed(table_id)
        await self._submit(
            identity,
            table_id,
            gpb.Command(start_game=gpb.StartGame()),
            checks.command_id(request.command_id),
            expected_version(request),
        )
        return pb.StartGameResponse()

    # -- plays ------------------------------------------------------------------------
    async def play(self, identity: Identity, request: pb.PlayRequest) -> pb.PlayResponse:
        """Play cards for the identity's seat."""
        play = gpb.PlayCards(cards=request.cards)
        if request.HasField("trick_version"):
            play.trick_version = request.trick_version
        version = await self._submit(
            identity,
            request.table_id,
            gpb.Command(play_cards=play),
            checks.command_id(request.command_id),
            expected_version(request),
        )
        return pb.PlayResponse(version=version)

    async def pass_(self, identity: Identity, request: pb.PassRequest) -> pb.PassResponse:
        """Pass for the identity's seat."""
        passing = gpb.Pass()
        if request.HasField("trick_version"):
            passing.trick_version = request.trick_version
        command = gpb.Command()
        getattr(command, "pass").CopyFrom(passing)
        version = await self._submit(
            identity,
            request.table_id,
            command,
            checks.command_id(request.command_id),
            expected_version(request),
        )
        return pb.PassResponse(version=version)

    async def return_cards(
        self, identity: Identity, request: pb.ReturnCardsRequest
    ) -> pb.ReturnCardsResponse:
        """Return cards in the exchange for the identity's seat."""
        version = await self._submit(
            identity,
            request.table_id,
            gpb.Command(return_cards=gpb.ReturnCards(cards=request.cards)),
            checks.command_id(request.command_id),
            expected_version(request),
        )
        return pb.ReturnCardsResponse(version=version)

    async def react(self, identity: Identity, request: pb.ReactRequest) -> pb.ReactResponse:
        """Show a reaction to the table."""
        code = checks.reaction(request.reaction)
        await self._submit(
            identity,
            request.table_id,
            gpb.Command(react=gpb.React(reaction=code)),
            secrets.token_hex(8),
            expected_version(request),
        )
        return pb.ReactResponse()

    async def leave(self, identity: Identity, request: pb.LeaveRequest) -> pb.LeaveResponse:
        """Leave: a bot finishes the round; the account acts there no more."""
        await self._submit(
            identity,
            request.table_id,
            gpb.Command(leave=gpb.Leave()),
            f"leave-{secrets.token_hex(6)}",
            expected_version(request),
        )
        return pb.LeaveResponse()

    async def host_action(
        self, identity: Identity, request: pb.HostActionRequest
    ) -> pb.HostActionResponse:
        """Host: Next round, End the game, Play again, Back to lobby."""
        table_id = checks.table_id(request.table_id)
        choice = HOST_CHOICES.get(request.choice)
        await self._hub.feed(table_id)
        if choice is None:
            raise checks.invalid(
                "INVALID_CHOICE",
                "choose next round, end the game, play again or back to lobby",
            )
        version = await self._submit(
            identity,
            table_id,
            choice(),
            checks.command_id(request.command_id),
            expected_version(request),
        )
        return pb.HostActionResponse(version=version)

    async def preview_play(
        self, identity: Identity, request: pb.PreviewPlayRequest
    ) -> pb.PreviewPlayResponse:
        """What the play button would say for these cards (rulebook 002); commits nothing."""
        table_id = checks.table_id(request.table_id)
        cards = checks.cards(request.cards)  # the table service's parser of a play's cards
        feed = await self._hub.feed(table_id)
        await feed.catch_up()
        seat = seat_of(feed.table.game, identity.account_id)
        if seat is None:
            raise read_only()  # nobody's cards are previewed for an identity without a seat
        return preview_response(feed.table, seat, cards)

    async def hand_over_host(
        self, identity: Identity, request: pb.HandOverHostRequest
    ) -> pb.HandOverHostResponse:
        """Host: hand the host role to the person in a seat (the table service decides)."""
        table_id = checks.table_id(request.table_id)
        command_id = checks.command_id(request.command_id) or f"host-{secrets.token_hex(6)}"
        await self._hub.feed(table_id)
        version = await self._submit(
            identity,
            table_id,
            gpb.Command(hand_over_host=gpb.HandOverHost(seat=request.seat)),
            command_id,
            expected_version(request),
        )
        return pb.HandOverHostResponse(version=version)

    # -- reading ------------------------------------------------------------------------
    async def get_table(
        self, identity: Identity, request: pb.GetTableRequest
    ) -> pb.GetTableResponse:
        """The table as the identity's seat sees it (without a seat: no hand)."""
        table_id = checks.table_id(request.table_id)
        view = await with_countdown(self._hub, table_id, await self._view(identity, table_id))
        return pb.GetTableResponse(view=view)

    async def get_scores(
        self, _identity: Identity, request: pb.GetScoresRequest
    ) -> pb.GetScoresResponse:
        """The current game's totals (from the table) and finished games (from scoring, once
        it caught up with the table: :mod:`president.services.gateway.calls.scores`)."""
        table_id = checks.table_id(request.table_id)
        return await scores(self._scoring, await self._tables.get_table(table_id, None))

    async def check_deal(
        self, _identity: Identity, request: pb.CheckDealRequest
    ) -> pb.CheckDealResponse:
        """A finished round's deal, re-created from its secret and compared with the log.

        Any identity may ask: a round's secret is public once the round ended.
        """
        table_id = checks.table_id(request.table_id)
        checks.round_number(request.game_no, request.round_no)
        events = await self._tables.read_events(table_id, 0)
        return check_deal(events, request.game_no, request.round_no)

    async def get_activity(
        self, identity: Identity, request: pb.GetActivityRequest
    ) -> pb.GetActivityResponse:
        """A page of the table's activity, newest first, redacted for the reader as Watch is."""
        table_id = checks.table_id(request.table_id)
        size = page_size(request.page_size)
        tokens, reader = self._pages, identity.account_id
        token = request.page_token
        before = before_version(tokens, token, table_id, reader) if token else None
        return await activity_page(
            self._hub, table_id, seat_resolver(reader), size, before, tokens, reader
        )

    def watch(
        self, identity: Identity, request: pb.WatchRequest, check: Check
    ) -> AsyncIterator[bytes]:
        """The identity's view as a stream: a snapshot then every change, or resume after a
        version (as the seat the account holds at each version; without one, no hand), each
        a serialized ``WatchResponse`` (every spectator's are the same bytes; with
        ``batched``, the changes ready together in one); ``check`` re-checks the identity's
        rights while the stream is open, its refusal ending it."""
        table_id = checks.table_id(request.table_id)
        resolver = seat_resolver(identity.account_id)
        stream = watch(
            self._hub,
            table_id,
            request.from_version,
            resolver,
            batched=request.batched,
            check=check,
        )
        return self._presence.follow(identity, table_id, stream)

    def watch_session(self, identity: Identity, request: pb.WatchRequest) -> AsyncIterator[bytes]:
        """:meth:`watch`, each change a serialized ``SessionResponse`` (see ``Entry``)."""
        table_id = checks.table_id(request.table_id)
        resolver = seat_resolver(identity.account_id)
        stream = watch_session(self._hub, table_id, request.from_version, resolver)
        return self._presence.follow(identity, table_id, stream)

    # -- internals ------------------------------------------------------------------------
    async def _report_presence(self, identity: Identity, table_id: str, connected: bool) -> None:
        """Tell the table whether the identity's seat has a stream open here (none: no seat)."""
        feed = await self._hub.feed(table_id)
        if seat_of(feed.table.game, identity.account_id) is None:
            return
        report = gpb.SetPresence(connected=connected, gateway=self.replica_id)
        await self._submit(
            identity,
            table_id,
            gpb.Command(set_presence=report),
            f"presence-{secrets.token_hex(8)}",
        )

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
        expected_version: int | None = None,
    ) -> int:
        request = tpb.ExecuteCommandRequest(
            table_id=table_id,
            command_id=command_id,
            actor=gpb.Actor(player_id=actor),
            command=gpb.Command(
                sit_down=gpb.SitDown(
                    seat=seat, player_id=player_id, display_name=name, is_bot=is_bot
                )
            ),
        )
        if expected_version is not None:
            request.expected_version = expected_version
        response = await self._tables.submit(request)
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

    async def _submit(
        self,
        identity: Identity,
        table: str,
        command: gpb.Command,
        command_id: str,
        expected_version: int | None = None,
    ) -> int:
        """Send (account, table, command) to the table service, which finds the account's
        seat and decides; with ``expected_version`` it runs only on that table version."""
        table_id = checks.table_id(table)
        request = tpb.ExecuteCommandRequest(
            table_id=table_id,
            command_id=scoped_command_id(identity.account_id, table_id, command_id),
            actor=gpb.Actor(player_id=identity.account_id),
            command=command,
        )
        if expected_version is not None:
            request.expected_version = expected_version
        response = await self._tables.submit(request)
        self._hub.nudge(table_id, response.version, response.committed)
        return response.version

    async def _view(self, identity: Identity, table_id: str) -> gpb.TableView:
        player = identity.account_id
        feed = self._hub.existing(table_id)
        seat = None
        if feed is not None and feed.current is not None:
            seat = seat_of(feed.table.game, player)
        view = await self._tables.get_table(table_id, seat)
        if seat is not None and _holds(view, seat, player):
            return view
        found = next((s.seat for s in view.seats if s.player_id == player), None)
        if found is None:
            return view if seat is None else await self._tables.get_table(table_id, None)
        view = await self._tables.get_table(table_id, found)
        return view if _holds(view, found, player) else await self._tables.get_table(table_id, None)


def scoped_command_id(account_id: str, table_id: str, command_id: str) -> str:
    """The stored id of a client's command: scoped by the account and the table (command ids
    are unique in the whole store, and one account plays at many tables), so a retry runs
    once and two tables never share an id. The table is named by a digest, to stay short."""
    table = hashlib.sha256(table_id.encode()).hexdigest()[:12]
    return f"{account_id}@{table}:{command_id}"


def _holds(view: gpb.TableView, seat: int | None, player_id: str) -> bool:
    return seat is not None and seat < len(view.seats) and view.seats[seat].player_id == player_id


__all__ = ["Gateway", "Refused", "scoped_command_id"]
