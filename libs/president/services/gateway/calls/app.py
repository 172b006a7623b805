"""What the gateway does for each call at a table once it is set up: plays, reads, watching.

The servicer (:mod:`president.services.gateway.api.handlers`) verifies the token and hands
the identity here; a table-scoped request names its table (``table_id``).
Every command goes to the table service as (account, table, command) in one
call (:meth:`Commands.submit <president.services.gateway.calls.commands.Commands.submit>`).
The gateway decides no seat and no right
itself: a seat command names no seat, and the table service acts for the seat
the account holds at that moment, checks every command, host actions
included, against the table's state (:mod:`president.services.table.rights`),
and reads the cards (:func:`president.servicekit.checks.cards`). Commands
carry the client's command id, scoped by account, so a retry with the same id
runs once. Refusals from the table service pass through unchanged. Setting a
table up (creating it, seats, bots, the start) is
:mod:`president.services.gateway.calls.seats`.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable

from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.seat_views import seat_of
from president.hosting.signatures import ALGORITHM, key_id
from president.servicekit.errors import read_only
from president.servicekit.identity import Identity
from president.services.gateway.calls import checks
from president.services.gateway.calls.activity import activity_page, activity_tokens, before_version
from president.services.gateway.calls.commands import Commands
from president.services.gateway.calls.countdowns import with_countdown
from president.services.gateway.calls.dealcheck import check_deal
from president.services.gateway.calls.lobby import lobby_page, lobby_tokens
from president.services.gateway.calls.page_tokens import page_size
from president.services.gateway.calls.preview import preview_response
from president.services.gateway.calls.scores import scores
from president.services.gateway.streams.feed import FeedHub
from president.services.gateway.streams.presence import Presence
from president.services.gateway.streams.watch import Check, seat_resolver, watch, watch_session
from president.services.gateway.upstream.ports import ScoringPort, TablePort

HOST_CHOICES: dict[int, Callable[[], gpb.Command]] = {
    pb.HOST_CHOICE_NEXT_ROUND: lambda: gpb.Command(next_round=gpb.NextRound()),
    pb.HOST_CHOICE_END_GAME: lambda: gpb.Command(end_game=gpb.EndGame()),
    pb.HOST_CHOICE_PLAY_AGAIN: lambda: gpb.Command(play_again=gpb.PlayAgain()),
    pb.HOST_CHOICE_BACK_TO_LOBBY: lambda: gpb.Command(back_to_lobby=gpb.BackToLobby()),
}


def published_keys(keys: tuple[str, ...]) -> pb.GetOperatorKeysResponse:
    """The answer of GetOperatorKeys: each public key (hex) by its id, the first current."""
    answer = pb.GetOperatorKeysResponse()
    for index, text in enumerate(keys):
        raw = bytes.fromhex(text)
        answer.keys.add(key_id=key_id(raw), algorithm=ALGORITHM, public_key=raw, current=index == 0)
    return answer


class Gateway:
    """The public API's logic, behind the servicer and in front of the table service."""

    def __init__(
        self,
        tables: TablePort,
        scoring: ScoringPort,
        hub: FeedHub,
        commands: Commands,
        id_key: bytes,
        operator_keys: tuple[str, ...] = (),
    ) -> None:
        self._tables = tables
        self._operator_keys = published_keys(operator_keys)
        self._scoring = scoring
        self._hub = hub
        self._commands = commands
        self._pages = activity_tokens(id_key)
        self._lobby_pages = lobby_tokens(id_key)
        #: This replica's id in presence reports (a new one each start).
        self.replica_id = secrets.token_hex(6)
        self._presence = Presence(self._report_presence)

    # -- tables -------------------------------------------------------------------------
    async def get_operator_keys(
        self, _request: pb.GetOperatorKeysRequest
    ) -> pb.GetOperatorKeysResponse:
        """The operator's public signing keys (receipts, the feed's heads): anyone may read."""
        return self._operator_keys

    async def list_commitments(
        self, request: pb.ListCommitmentsRequest
    ) -> pb.ListCommitmentsResponse:
        """A page of the public commitment feed: anyone may read and archive it."""
        entries = await self._tables.list_commitments(request.day, request.after_seq, request.limit)
        return pb.ListCommitmentsResponse(entries=entries)

    async def list_tables(self, request: pb.ListTablesRequest) -> pb.ListTablesResponse:
        """The lobby: public tables, filtered, a page at a time (never private or practice)."""
        return await lobby_page(self._tables, request, self._lobby_pages)

    async def spectate(
        self, _identity: Identity, request: pb.SpectateRequest
    ) -> pb.SpectateResponse:
        """Whether a table exists to be watched: any identity watches a table it knows."""
        table_id = checks.table_id(request.table_id)
        await self._hub.feed(table_id)
        return pb.SpectateResponse()

    # -- plays ------------------------------------------------------------------------
    async def play(self, identity: Identity, request: pb.PlayRequest) -> pb.PlayResponse:
        """Play cards for the identity's seat."""
        play = gpb.PlayCards(cards=request.cards)
        if request.HasField("trick_version"):
            play.trick_version = request.trick_version
        version = await self._commands.run(
            identity, request, gpb.Command(play_cards=play), checks.command_id(request.command_id)
        )
        return pb.PlayResponse(version=version)

    async def pass_(self, identity: Identity, request: pb.PassRequest) -> pb.PassResponse:
        """Pass for the identity's seat."""
        passing = gpb.Pass()
        if request.HasField("trick_version"):
            passing.trick_version = request.trick_version
        command = gpb.Command()
        getattr(command, "pass").CopyFrom(passing)
        version = await self._commands.run(
            identity, request, command, checks.command_id(request.command_id)
        )
        return pb.PassResponse(version=version)

    async def return_cards(
        self, identity: Identity, request: pb.ReturnCardsRequest
    ) -> pb.ReturnCardsResponse:
        """Return cards in the exchange for the identity's seat."""
        version = await self._commands.run(
            identity,
            request,
            gpb.Command(return_cards=gpb.ReturnCards(cards=request.cards)),
            checks.command_id(request.command_id),
        )
        return pb.ReturnCardsResponse(version=version)

    async def react(self, identity: Identity, request: pb.ReactRequest) -> pb.ReactResponse:
        """Show a reaction to the table."""
        code = checks.reaction(request.reaction)
        await self._commands.run(
            identity, request, gpb.Command(react=gpb.React(reaction=code)), secrets.token_hex(8)
        )
        return pb.ReactResponse()

    async def send_chat(
        self, identity: Identity, request: pb.SendChatRequest
    ) -> pb.SendChatResponse:
        """Write a chat message from the identity's seat (normalised, checked here first)."""
        text = checks.chat_text(request.text)
        command_id = checks.command_id(request.command_id) or f"chat-{secrets.token_hex(8)}"
        version = await self._commands.run(
            identity, request, gpb.Command(chat=gpb.Chat(text=text)), command_id
        )
        return pb.SendChatResponse(version=version)

    async def leave(self, identity: Identity, request: pb.LeaveRequest) -> pb.LeaveResponse:
        """Leave: a bot finishes the round; the account acts there no more."""
        await self._commands.run(
            identity, request, gpb.Command(leave=gpb.Leave()), f"leave-{secrets.token_hex(6)}"
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
        version = await self._commands.run(
            identity, request, choice(), checks.command_id(request.command_id)
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
        await self._commands.submit(
            identity,
            table_id,
            gpb.Command(set_presence=report),
            f"presence-{secrets.token_hex(8)}",
        )

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


def _holds(view: gpb.TableView, seat: int | None, player_id: str) -> bool:
    return seat is not None and seat < len(view.seats) and view.seats[seat].player_id == player_id


__all__ = ["Gateway"]
