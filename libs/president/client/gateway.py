"""One player's (or watcher's) connection to the gateway: its identity, its calls and its
Session stream.

A client carries an identity: the access and refresh tokens of an account
(``create_guest``, ``register``, ``log_in``; ``create_table``, ``join`` and
``spectate`` create a guest when the client has none yet) and sends the
access token with every call, refreshing it shortly before it expires.
Table calls name the client's table (the one it created, joined or
watches). Refusals raise :class:`~president.client.errors.GatewayError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import deque
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Any, Self

import grpc
from google.protobuf.message import Message

from president.client.accounts import AccountCalls
from president.client.errors import (
    RETRY_ATTEMPTS,
    GatewayError,
    honouring_retry_hints,
    raising_gateway_error,
)
from president.client.quick_play import QuickPlayCalls
from president.client.ratings import RatingCalls
from president.client.receipts import Receipts
from president.client.tournaments import TournamentCalls
from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.gateway.v1 import gateway_pb2_grpc

HOST_CHOICES = {
    "next_round": pb.HOST_CHOICE_NEXT_ROUND,
    "end_game": pb.HOST_CHOICE_END_GAME,
    "play_again": pb.HOST_CHOICE_PLAY_AGAIN,
    "back_to_lobby": pb.HOST_CHOICE_BACK_TO_LOBBY,
}
#: The proto's visibility of each name (``practice``, ``public``, ``private``).
VISIBILITY_VALUES = {
    name.removeprefix("VISIBILITY_").lower(): value
    for name, value in pb.Visibility.items()
    if value != pb.VISIBILITY_UNSPECIFIED
}


#: How soon a client tries a restarted gateway again (the first wait, and the longest;
#: gRPC grows the wait 1.6 times per failed try and spreads it by ±20 %, so the clients
#: of a restarted gateway do not all come back at once). gRPC's own backoff grows to two
#: minutes, far longer than a gateway takes to come back; capped at a second, a client is
#: back at most a second after its gateway (a restart's pause: down, start-up, one wait).
RECONNECT_MS = (100, 1_000)
#: How long one connection attempt may take (gRPC's ``min_reconnect_backoff_ms``, which is
#: no backoff): at 250 ms a call to a gateway slow to answer failed UNAVAILABLE at once.
CONNECT_TIMEOUT_MS = 5_000
#: How often a client pings a gateway whose connection is quiet, and how long it waits
#: for the answer before it gives the connection up (the gateways allow pings this often:
#: ``Keepalive.public_ping_ms``). A connection cut without a word (a switch or a route
#: between them gone: nothing closes it, a watch stream just goes quiet) is found within
#: about ten seconds and the client connects again, to the next gateway of its target
#: (``ipv4:a:50051,b:50051``) if that one is unreachable, and resumes there.
PING_MS = 5_000
PING_TIMEOUT_MS = 5_000


def channel(address: str, *, tls: bool = False, ca: bytes | None = None) -> grpc.aio.Channel:
    """A channel to a gateway: TLS with ``tls`` (trusting ``ca``, PEM bytes, else the
    system's roots), otherwise plaintext (loopback or inside a private network).
    ``address`` is a gRPC target: one gateway, or several (``ipv4:a:50051,b:50051``, tried
    in that order)."""
    first, most = RECONNECT_MS
    options = [
        ("grpc.max_receive_message_length", 16 * 1024 * 1024),
        ("grpc.initial_reconnect_backoff_ms", first),
        ("grpc.min_reconnect_backoff_ms", CONNECT_TIMEOUT_MS),
        ("grpc.max_reconnect_backoff_ms", most),
        ("grpc.keepalive_time_ms", PING_MS),
        ("grpc.keepalive_timeout_ms", PING_TIMEOUT_MS),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
    ]
    if tls or ca is not None:
        credentials = grpc.ssl_channel_credentials(root_certificates=ca)
        return grpc.aio.secure_channel(address, credentials, options=options)
    return grpc.aio.insecure_channel(address, options=options)


def _chosen_on(request: Any, expected_version: int | None) -> Any:
    """``request`` naming the table version its command was chosen on (STALE once it moved on)."""
    if expected_version is not None:
        request.expected_version = expected_version
    return request


class GatewayClient(AccountCalls, QuickPlayCalls, RatingCalls, TournamentCalls):
    """One player's (or watcher's) connection to the gateway, with their identity."""

    def __init__(
        self,
        channel_: grpc.aio.Channel,
        *,
        token: str = "",
        table_id: str = "",
        seat: int | None = None,
        player_id: str = "",
        refresh_token: str = "",
        owns_channel: bool = False,
    ) -> None:
        self.channel = channel_
        self.stub: Any = gateway_pb2_grpc.GatewayServiceStub(channel_)
        self._start_identity(token, refresh_token, player_id)
        self.table_id = table_id
        self.seat = seat
        self._owns_channel = owns_channel
        #: The receipts of every change this client received (:meth:`watch`, :class:`Session`).
        self.receipts = Receipts(table_id or "", player_id or "")
        #: How many times a call refused by a rate limit is waited out and sent again.
        self.rate_limit_retries = RETRY_ATTEMPTS

    @classmethod
    def connect(
        cls, address: str, *, tls: bool = False, ca: bytes | None = None, **kwargs: Any
    ) -> GatewayClient:
        """A client on a new channel of its own (closed with the client): TLS with ``tls``
        or a ``ca`` to trust (see :func:`channel`)."""
        return cls(channel(address, tls=tls, ca=ca), owns_channel=True, **kwargs)

    def sibling(self, **kwargs: Any) -> GatewayClient:
        """Another client on the same channel: another player, with an identity of its own."""
        return GatewayClient(self.channel, **kwargs)

    async def close(self) -> None:
        if self._owns_channel:
            await self.channel.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.close()

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The call metadata: the bearer token."""
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()

    async def _unary(self, method: str, request: Message, timeout: float = 30.0) -> Any:
        await self._fresh()
        return await self._call(method, request, timeout)

    async def _call(self, method: str, request: Message, timeout: float = 30.0) -> Any:
        """One call; a rate limit's refusal is waited out as it asks, and the call sent again."""
        return await honouring_retry_hints(
            lambda: raising_gateway_error(
                getattr(self.stub, method)(request, metadata=self.metadata(), timeout=timeout)
            ),
            self.rate_limit_retries,
        )

    # -- tables and seats -----------------------------------------------------
    async def create_table(
        self,
        preset: str = "classic",
        *,
        options: dict[str, str] | None = None,
        seat_count: int = 0,
        visibility: str = "practice",
        display_name: str = "You",
        command_id: str = "",
        name: str = "",
    ) -> pb.CreateTableResponse:
        """Create a table and sit at it as its host (a guest is created if need be)."""
        await self._identity(display_name)
        created: pb.CreateTableResponse = await self._unary(
            "CreateTable",
            pb.CreateTableRequest(
                options=gpb.TableOptions(preset=preset, options=options or {}),
                seat_count=seat_count,
                visibility=VISIBILITY_VALUES.get(visibility, pb.VISIBILITY_UNSPECIFIED),
                display_name=display_name,
                command_id=command_id,
                name=name,
            ),
        )
        self.table_id, self.seat = created.table_id, created.seat
        return created

    async def list_tables(
        self,
        *,
        preset: str = "",
        min_free_seats: int = 0,
        in_progress: bool = False,
        page_size: int = 0,
        page_token: str = "",
    ) -> list[pb.TableSummary]:
        """A page of the lobby: public tables in the lobby with a free seat (with
        ``in_progress``, the games under way too); see :meth:`lobby_page` for paging."""
        page = await self.lobby_page(
            preset=preset,
            min_free_seats=min_free_seats,
            in_progress=in_progress,
            page_size=page_size,
            page_token=page_token,
        )
        return list(page.tables)

    async def lobby_page(
        self,
        *,
        preset: str = "",
        min_free_seats: int = 0,
        in_progress: bool = False,
        page_size: int = 0,
        page_token: str = "",
    ) -> pb.ListTablesResponse:
        """A page of the lobby with its ``next_page_token`` (empty on the last page)."""
        listed: pb.ListTablesResponse = await self._unary(
            "ListTables",
            pb.ListTablesRequest(
                preset=preset,
                min_free_seats=min_free_seats,
                in_progress=in_progress,
                page_size=page_size,
                page_token=page_token,
            ),
        )
        return listed

    async def join(
        self, table_id: str, display_name: str, seat: int | None = None
    ) -> pb.JoinTableResponse:
        """Take a seat (a guest is created if need be); the client then acts there."""
        await self._identity(display_name)
        request = pb.JoinTableRequest(table_id=table_id, display_name=display_name)
        if seat is not None:
            request.seat = seat
        joined: pb.JoinTableResponse = await self._unary("JoinTable", request)
        self.table_id, self.seat = table_id, joined.seat
        return joined

    async def spectate(self, table_id: str, auditor: bool = False) -> str:
        """Watch a table that exists (a guest is created if need be); the access token.

        Any identity watches and checks finished deals: ``auditor`` is only
        passed on (it grants nothing more).
        """
        await self._identity("Spectator")
        await self._unary("Spectate", pb.SpectateRequest(table_id=table_id, auditor=auditor))
        self.table_id, self.seat = table_id, None
        return self.token

    async def add_bot(
        self, seat: int | None = None, level: str = "", *, expected_version: int | None = None
    ) -> int:
        """Host: seat a bot (``basic`` unless ``level`` says ``strong``); returns its seat."""
        request = _chosen_on(
            pb.AddBotRequest(level=level, table_id=self.table_id), expected_version
        )
        if seat is not None:
            request.seat = seat
        added: pb.AddBotResponse = await self._unary("AddBot", request)
        return added.seat

    async def remove_seat(self, seat: int, *, expected_version: int | None = None) -> None:
        """Host: remove a seat's occupant."""
        request = _chosen_on(
            pb.RemoveSeatRequest(seat=seat, table_id=self.table_id), expected_version
        )
        await self._unary("RemoveSeat", request)

    async def start(self, command_id: str = "", *, expected_version: int | None = None) -> None:
        """Start the game."""
        request = _chosen_on(
            pb.StartGameRequest(command_id=command_id, table_id=self.table_id), expected_version
        )
        await self._unary("StartGame", request)

    # -- plays ------------------------------------------------------------------
    async def play(
        self,
        cards: Sequence[str],
        trick_version: int | None = None,
        command_id: str = "",
        *,
        expected_version: int | None = None,
    ) -> int:
        """Play cards; returns the table's version after the play.

        ``expected_version``: the view's version the play was chosen on; the
        play is refused ABORTED (``STALE``) if the table has moved on since.
        """
        request = _chosen_on(
            pb.PlayRequest(cards=list(cards), command_id=command_id, table_id=self.table_id),
            expected_version,
        )
        if trick_version is not None:
            request.trick_version = trick_version
        played: pb.PlayResponse = await self._unary("Play", request)
        return played.version

    async def pass_(
        self,
        trick_version: int | None = None,
        command_id: str = "",
        *,
        expected_version: int | None = None,
    ) -> int:
        """Pass; returns the table's version after it."""
        request = _chosen_on(
            pb.PassRequest(command_id=command_id, table_id=self.table_id), expected_version
        )
        if trick_version is not None:
            request.trick_version = trick_version
        passed: pb.PassResponse = await self._unary("Pass", request)
        return passed.version

    async def return_cards(
        self, cards: Sequence[str], command_id: str = "", *, expected_version: int | None = None
    ) -> int:
        """Return cards in the exchange."""
        request = pb.ReturnCardsRequest(
            cards=list(cards), command_id=command_id, table_id=self.table_id
        )
        returned: pb.ReturnCardsResponse = await self._unary(
            "ReturnCards", _chosen_on(request, expected_version)
        )
        return returned.version

    async def react(self, reaction: str, *, expected_version: int | None = None) -> None:
        """Show a reaction."""
        request = _chosen_on(
            pb.ReactRequest(reaction=reaction, table_id=self.table_id), expected_version
        )
        await self._unary("React", request)

    async def send_chat(self, text: str, command_id: str = "") -> int:
        """Write a chat message from this token's seat; returns the table's version."""
        sent: pb.SendChatResponse = await self._unary(
            "SendChat",
            pb.SendChatRequest(text=text, command_id=command_id, table_id=self.table_id),
        )
        return sent.version

    async def mute_seat(self, seat: int, muted: bool = True, command_id: str = "") -> int:
        """Host: mute (or unmute) the person in ``seat``; returns the table's version."""
        done: pb.MuteSeatResponse = await self._unary(
            "MuteSeat",
            pb.MuteSeatRequest(
                seat=seat, muted=muted, command_id=command_id, table_id=self.table_id
            ),
        )
        return done.version

    async def leave(self, *, expected_version: int | None = None) -> None:
        """Leave the table (a bot finishes the round)."""
        await self._unary(
            "Leave", _chosen_on(pb.LeaveRequest(table_id=self.table_id), expected_version)
        )

    async def host_action(
        self, choice: str, command_id: str = "", *, expected_version: int | None = None
    ) -> int:
        """Host: ``next_round``, ``end_game``, ``play_again`` or ``back_to_lobby``."""
        request = pb.HostActionRequest(
            table_id=self.table_id,
            choice=HOST_CHOICES.get(choice, pb.HOST_CHOICE_UNSPECIFIED),
            command_id=command_id,
        )
        done: pb.HostActionResponse = await self._unary(
            "HostAction", _chosen_on(request, expected_version)
        )
        return done.version

    async def preview_play(self, cards: Sequence[str]) -> pb.PreviewPlayResponse:
        """What the play button would say for these cards, or why the play would be refused
        (``refused``); nothing is played."""
        previewed: pb.PreviewPlayResponse = await self._unary(
            "PreviewPlay", pb.PreviewPlayRequest(cards=list(cards), table_id=self.table_id)
        )
        return previewed

    async def hand_over_host(self, seat: int, command_id: str = "") -> int:
        """Host: hand the host role to the person in ``seat``; returns the table's version."""
        done: pb.HandOverHostResponse = await self._unary(
            "HandOverHost",
            pb.HandOverHostRequest(seat=seat, command_id=command_id, table_id=self.table_id),
        )
        return done.version

    # -- reading ------------------------------------------------------------------
    async def get_table(self) -> gpb.TableView:
        """The table as this token sees it."""
        got: pb.GetTableResponse = await self._unary(
            "GetTable", pb.GetTableRequest(table_id=self.table_id)
        )
        return got.view

    async def get_scores(self) -> pb.GetScoresResponse:
        """Totals of the current game and the finished games."""
        scores: pb.GetScoresResponse = await self._unary(
            "GetScores", pb.GetScoresRequest(table_id=self.table_id)
        )
        return scores

    async def list_commitments(
        self, day: str = "", after_seq: int = 0, limit: int = 0
    ) -> list[epb.CommitmentEntry]:
        """A page of the public commitment feed (no token needed): each round's fingerprint
        as published when it was committed, for anyone to archive."""
        listed: pb.ListCommitmentsResponse = await self._unary(
            "ListCommitments",
            pb.ListCommitmentsRequest(day=day, after_seq=after_seq, limit=limit),
        )
        return list(listed.entries)

    async def operator_keys(self) -> list[pb.OperatorKey]:
        """The operator's public signing keys (no token needed), the current one first:
        ``key.public_key.hex()`` is what ``president audit verify --operator-key`` takes."""
        answer: pb.GetOperatorKeysResponse = await self._unary(
            "GetOperatorKeys", pb.GetOperatorKeysRequest()
        )
        return list(answer.keys)

    async def check_deal(self, game_no: int, round_no: int) -> pb.CheckDealResponse:
        """The committed deal of a finished round, checked."""
        checked: pb.CheckDealResponse = await self._unary(
            "CheckDeal",
            pb.CheckDealRequest(game_no=game_no, round_no=round_no, table_id=self.table_id),
        )
        return checked

    async def activity(self, page_size: int = 0, page_token: str = "") -> pb.GetActivityResponse:
        """A page of the table's activity, newest first (``next_page_token`` for the next)."""
        page: pb.GetActivityResponse = await self._unary(
            "GetActivity",
            pb.GetActivityRequest(
                page_size=page_size, page_token=page_token, table_id=self.table_id
            ),
        )
        return page

    def session(self, from_version: int = 0) -> Session:
        """Watch and act on one Session stream (see :class:`Session`)."""
        return Session(self, from_version)

    def _keep_receipt(self, change: pb.WatchResponse) -> None:
        """Keep a received change's receipt (the table and holder as the client knows them)."""
        receipts = self.receipts
        if not receipts.table_id and self.table_id:
            receipts.table_id = self.table_id
        if not receipts.holder:
            receipts.holder = self.player_id or (
                f"seat {self.seat}" if self.seat is not None else ""
            )
        receipts.keep(change)

    async def watch(self, from_version: int = 0) -> AsyncIterator[pb.WatchResponse]:
        """The table as this identity sees it, as a stream (a snapshot, then every change; or
        resume). It asks for batched messages (a stream behind catches up in one message)
        and yields their changes one by one."""
        await self._fresh()
        call = self.stub.Watch(
            pb.WatchRequest(from_version=from_version, table_id=self.table_id, batched=True),
            metadata=self.metadata(),
        )
        try:
            async for message in call:
                for change in message.changes or (message,):
                    self._keep_receipt(change)
                    yield change
        except grpc.aio.AioRpcError as error:
            raise GatewayError.of(error) from None
        finally:
            call.cancel()


class Session:
    """One Session stream: the seat's changes, and its commands sent on the same stream.

    ::

        async with client.session() as session:
            async for change in session.changes():
                await session.play(["3C"])

    The changes are those :meth:`GatewayClient.watch` yields. ``play``,
    ``pass_``, ``return_cards`` and ``host_action`` work as the client's
    calls do (a refusal raises :class:`GatewayError`), but travel on the open
    stream, which costs the gateway and the client far less than a call.
    """

    def __init__(self, client: GatewayClient, from_version: int = 0) -> None:
        self._outbox: asyncio.Queue[pb.SessionRequest | None] = asyncio.Queue()
        self._outbox.put_nowait(
            pb.SessionRequest(
                watch=pb.WatchRequest(from_version=from_version, table_id=client.table_id)
            )
        )
        self._changes: asyncio.Queue[pb.WatchResponse | GatewayError | None] = asyncio.Queue()
        self._waiting: deque[tuple[str, asyncio.Future[int]]] = deque()
        self._call = client.stub.Session(self._requests(), metadata=client.metadata())
        self._client = client
        self._reader = asyncio.create_task(self._read(), name="session-reader")
        self._ended: GatewayError | None = None
        #: Messages received on the stream so far (one may carry several changes).
        self.messages = 0

    async def _requests(self) -> AsyncIterator[pb.SessionRequest]:
        while (request := await self._outbox.get()) is not None:
            yield request

    async def _read(self) -> None:
        ended: GatewayError | None = None
        try:
            async for response in self._call:
                self.messages += 1
                for change in response.changes:
                    self._client._keep_receipt(change)
                    self._changes.put_nowait(change)
                for result in response.results:
                    self._resolve(result)
        except grpc.aio.AioRpcError as error:
            ended = GatewayError.of(error)
        except asyncio.CancelledError:
            pass
        finally:
            self._ended = ended or GatewayError(
                grpc.StatusCode.UNAVAILABLE, "SESSION_ENDED", "the session stream ended"
            )
            for _command_id, future in self._waiting:
                if not future.done():
                    future.set_exception(self._ended)
            self._waiting.clear()
            self._changes.put_nowait(ended)

    def _resolve(self, result: pb.CommandResult) -> None:
        """The outcome of the oldest command waiting for one."""
        command_id, future = self._waiting.popleft()
        if future.done():
            return
        if result.command_id != command_id:
            future.set_exception(
                GatewayError(
                    grpc.StatusCode.INTERNAL, "OUT_OF_ORDER", "a result for another command"
                )
            )
        elif result.HasField("refused"):
            refused = result.refused
            future.set_exception(
                GatewayError.refused(
                    refused.code, refused.reason, refused.message, dict(refused.metadata)
                )
            )
        else:
            future.set_result(result.version)

    async def changes(self) -> AsyncIterator[pb.WatchResponse]:
        """The changes, as Watch streams them; raises the stream's error if it failed."""
        while (item := await self._changes.get()) is not None:
            if isinstance(item, GatewayError):
                raise item
            yield item

    async def _send(self, request: pb.SessionRequest, command_id: str) -> int:
        """Send a command; its table version after it (a rate limit's refusal is waited out
        and the same command sent again)."""
        return await honouring_retry_hints(
            lambda: self._send_once(request, command_id), self._client.rate_limit_retries
        )

    async def _send_once(self, request: pb.SessionRequest, command_id: str) -> int:
        if self._reader.done():
            raise self._ended or GatewayError(
                grpc.StatusCode.UNAVAILABLE, "SESSION_ENDED", "the session stream ended"
            )
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting.append((command_id, future))
        self._outbox.put_nowait(request)
        return await future

    async def play(
        self,
        cards: Sequence[str],
        trick_version: int | None = None,
        command_id: str = "",
        *,
        expected_version: int | None = None,
    ) -> int:
        """Play cards; the table's version after the play."""
        command_id = command_id or uuid.uuid4().hex
        play = _chosen_on(
            pb.PlayRequest(cards=list(cards), command_id=command_id), expected_version
        )
        if trick_version is not None:
            play.trick_version = trick_version
        return await self._send(pb.SessionRequest(play=play), command_id)

    async def pass_(
        self,
        trick_version: int | None = None,
        command_id: str = "",
        *,
        expected_version: int | None = None,
    ) -> int:
        """Pass; the table's version after it."""
        command_id = command_id or uuid.uuid4().hex
        passing = _chosen_on(pb.PassRequest(command_id=command_id), expected_version)
        if trick_version is not None:
            passing.trick_version = trick_version
        request = pb.SessionRequest()
        getattr(request, "pass").CopyFrom(passing)
        return await self._send(request, command_id)

    async def return_cards(
        self, cards: Sequence[str], command_id: str = "", *, expected_version: int | None = None
    ) -> int:
        """Return cards in the exchange."""
        command_id = command_id or uuid.uuid4().hex
        returning = _chosen_on(
            pb.ReturnCardsRequest(cards=list(cards), command_id=command_id), expected_version
        )
        return await self._send(pb.SessionRequest(return_cards=returning), command_id)

    async def host_action(
        self, choice: str, command_id: str = "", *, expected_version: int | None = None
    ) -> int:
        """Host: ``next_round``, ``end_game``, ``play_again`` or ``back_to_lobby``."""
        command_id = command_id or uuid.uuid4().hex
        action = _chosen_on(
            pb.HostActionRequest(
                choice=HOST_CHOICES.get(choice, pb.HOST_CHOICE_UNSPECIFIED), command_id=command_id
            ),
            expected_version,
        )
        return await self._send(pb.SessionRequest(host_action=action), command_id)

    async def close(self) -> None:
        """End the stream (commands still waiting fail)."""
        self._outbox.put_nowait(None)
        self._call.cancel()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()
