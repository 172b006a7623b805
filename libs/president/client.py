"""A small typed client of the public gateway, and a bot that plays a seat through it.

::

    async with GatewayClient.connect("127.0.0.1:50051") as client:
        created = await client.create_table(preset="house", display_name="Ada")
        await client.start()
        async for change in client.watch():
            print(change.version, change.view.phase)

A client carries the bearer token the gateway issued it (``create_table``,
``join`` and ``spectate`` keep it) and sends it with every call. Refusals
raise :class:`GatewayError` with the status code, the ErrorInfo reason (the
stable code, such as ``TOO_LOW``) and the sentence for a person.

:func:`play_seat` is the bot client used by ``president run``, the
end-to-end tests and the load benchmark: it watches its seat's stream and
answers with one of the view's legal actions.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self, TypeVar

import grpc
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.gateway.v1 import gateway_pb2_grpc
from president.rules.cards import parse_card
from president.servicekit.checks import VISIBILITIES

T = TypeVar("T")
TABLE_HEADER = "president-table-id"
HOST_CHOICES = {
    "next_round": pb.HOST_CHOICE_NEXT_ROUND,
    "end_game": pb.HOST_CHOICE_END_GAME,
    "play_again": pb.HOST_CHOICE_PLAY_AGAIN,
    "back_to_lobby": pb.HOST_CHOICE_BACK_TO_LOBBY,
}
#: The proto's visibility of each name.
VISIBILITY_VALUES = {
    name: pb.Visibility.Value(f"VISIBILITY_{name.upper()}") for name in VISIBILITIES
}
RESUMABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
#: Reasons of a failure that says nothing about the command, only that the
#: connection was lost (none: the gateway went away), so it is sent again.
CONNECTION_LOST = ("", "UPSTREAM_UNAVAILABLE", "SESSION_ENDED")


class GatewayError(Exception):
    """A refused call: the gRPC status, the ErrorInfo reason and the sentence."""

    def __init__(self, code: grpc.StatusCode, reason: str, message: str) -> None:
        super().__init__(f"{code.name} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message

    @classmethod
    def of(cls, error: grpc.aio.AioRpcError) -> GatewayError:
        """The error of a failed call, with its ErrorInfo reason when it carries one."""
        reason = ""
        for key, value in error.trailing_metadata() or ():
            if key == "grpc-status-details-bin" and isinstance(value, bytes):
                status = status_pb2.Status.FromString(value)
                for detail in status.details:
                    if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                        info = error_details_pb2.ErrorInfo()
                        detail.Unpack(info)
                        reason = info.reason
        return cls(error.code(), reason, error.details() or "")


async def _call(call: Awaitable[T]) -> T:
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        raise GatewayError.of(error) from None


#: How soon a client tries a restarted gateway again: gRPC's own backoff grows
#: to two minutes, far longer than a gateway takes to come back.
RECONNECT_MS = (250, 2_000)


def channel(address: str) -> grpc.aio.Channel:
    """An insecure channel to a gateway (loopback or inside a private network)."""
    first, most = RECONNECT_MS
    return grpc.aio.insecure_channel(
        address,
        options=[
            ("grpc.max_receive_message_length", 16 * 1024 * 1024),
            ("grpc.initial_reconnect_backoff_ms", first),
            ("grpc.min_reconnect_backoff_ms", first),
            ("grpc.max_reconnect_backoff_ms", most),
        ],
    )


class GatewayClient:
    """One player's (or watcher's) connection to the gateway, with their token."""

    def __init__(
        self,
        channel_: grpc.aio.Channel,
        *,
        token: str = "",
        table_id: str = "",
        seat: int | None = None,
        player_id: str = "",
        owns_channel: bool = False,
    ) -> None:
        self.channel = channel_
        self.stub: Any = gateway_pb2_grpc.GatewayServiceStub(channel_)
        self.token = token
        self.table_id = table_id
        self.seat = seat
        self.player_id = player_id
        self._owns_channel = owns_channel

    @classmethod
    def connect(cls, address: str, **kwargs: Any) -> GatewayClient:
        """A client on a new channel of its own (closed with the client)."""
        return cls(channel(address), owns_channel=True, **kwargs)

    def sibling(self, **kwargs: Any) -> GatewayClient:
        """Another client on the same channel (another player, another token)."""
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
        """The call metadata: the bearer token and the table it is meant for."""
        out: list[tuple[str, str]] = []
        if self.token:
            out.append(("authorization", f"Bearer {self.token}"))
        if self.table_id:
            out.append((TABLE_HEADER, self.table_id))
        return tuple(out)

    async def _unary(self, method: str, request: Message, timeout: float = 30.0) -> Any:
        return await _call(
            getattr(self.stub, method)(request, metadata=self.metadata(), timeout=timeout)
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
    ) -> pb.CreateTableResponse:
        """Create a table and keep the host's token."""
        created: pb.CreateTableResponse = await self._unary(
            "CreateTable",
            pb.CreateTableRequest(
                options=gpb.TableOptions(preset=preset, options=options or {}),
                seat_count=seat_count,
                visibility=VISIBILITY_VALUES.get(visibility, pb.VISIBILITY_UNSPECIFIED),
                display_name=display_name,
                command_id=command_id,
            ),
        )
        self.token, self.table_id = created.token, created.table_id
        self.seat, self.player_id = created.seat, created.player_id
        return created

    async def list_tables(self) -> list[pb.TableSummary]:
        """Public tables in the lobby with a free seat."""
        listed: pb.ListTablesResponse = await self._unary("ListTables", pb.ListTablesRequest())
        return list(listed.tables)

    async def join(
        self, table_id: str, display_name: str, seat: int | None = None
    ) -> pb.JoinTableResponse:
        """Take a seat and keep its token."""
        request = pb.JoinTableRequest(table_id=table_id, display_name=display_name)
        if seat is not None:
            request.seat = seat
        joined: pb.JoinTableResponse = await self._unary("JoinTable", request)
        self.token, self.table_id = joined.token, table_id
        self.seat, self.player_id = joined.seat, joined.player_id
        return joined

    async def spectate(self, table_id: str, auditor: bool = False) -> str:
        """A read-only token (kept) to watch a table."""
        watched: pb.SpectateResponse = await self._unary(
            "Spectate", pb.SpectateRequest(table_id=table_id, auditor=auditor)
        )
        self.token, self.table_id, self.seat = watched.token, table_id, None
        return watched.token

    async def add_bot(self, seat: int | None = None) -> int:
        """Host: seat a bot; returns its seat."""
        request = pb.AddBotRequest()
        if seat is not None:
            request.seat = seat
        added: pb.AddBotResponse = await self._unary("AddBot", request)
        return added.seat

    async def remove_seat(self, seat: int) -> None:
        """Host: remove a seat's occupant."""
        await self._unary("RemoveSeat", pb.RemoveSeatRequest(seat=seat))

    async def start(self, command_id: str = "") -> None:
        """Start the game."""
        await self._unary("StartGame", pb.StartGameRequest(command_id=command_id))

    # -- plays ------------------------------------------------------------------
    async def play(
        self, cards: Sequence[str], trick_version: int | None = None, command_id: str = ""
    ) -> int:
        """Play cards; returns the table's version after the play."""
        request = pb.PlayRequest(cards=list(cards), command_id=command_id)
        if trick_version is not None:
            request.trick_version = trick_version
        played: pb.PlayResponse = await self._unary("Play", request)
        return played.version

    async def pass_(self, trick_version: int | None = None, command_id: str = "") -> int:
        """Pass; returns the table's version after it."""
        request = pb.PassRequest(command_id=command_id)
        if trick_version is not None:
            request.trick_version = trick_version
        passed: pb.PassResponse = await self._unary("Pass", request)
        return passed.version

    async def return_cards(self, cards: Sequence[str], command_id: str = "") -> int:
        """Return cards in the exchange."""
        returned: pb.ReturnCardsResponse = await self._unary(
            "ReturnCards", pb.ReturnCardsRequest(cards=list(cards), command_id=command_id)
        )
        return returned.version

    async def react(self, reaction: str) -> None:
        """Show a reaction."""
        await self._unary("React", pb.ReactRequest(reaction=reaction))

    async def leave(self) -> None:
        """Leave the table (a bot finishes the round)."""
        await self._unary("Leave", pb.LeaveRequest())

    async def host_action(self, choice: str, command_id: str = "") -> int:
        """Host: ``next_round``, ``end_game``, ``play_again`` or ``back_to_lobby``."""
        done: pb.HostActionResponse = await self._unary(
            "HostAction",
            pb.HostActionRequest(
                choice=HOST_CHOICES.get(choice, pb.HOST_CHOICE_UNSPECIFIED),
                command_id=command_id,
            ),
        )
        return done.version

    # -- reading ------------------------------------------------------------------
    async def get_table(self) -> gpb.TableView:
        """The table as this token sees it."""
        got: pb.GetTableResponse = await self._unary("GetTable", pb.GetTableRequest())
        return got.view

    async def get_scores(self) -> pb.GetScoresResponse:
        """Totals of the current game and the finished games."""
        scores: pb.GetScoresResponse = await self._unary("GetScores", pb.GetScoresRequest())
        return scores

    async def check_deal(self, game_no: int, round_no: int) -> pb.CheckDealResponse:
        """The committed deal of a finished round, checked."""
        checked: pb.CheckDealResponse = await self._unary(
            "CheckDeal", pb.CheckDealRequest(game_no=game_no, round_no=round_no)
        )
        return checked

    def session(self, from_version: int = 0) -> Session:
        """Watch and act on one Session stream (see :class:`Session`)."""
        return Session(self, from_version)

    async def watch(self, from_version: int = 0) -> AsyncIterator[pb.WatchResponse]:
        """The token's view as a stream (a snapshot, then every change; or resume)."""
        call = self.stub.Watch(pb.WatchRequest(from_version=from_version), metadata=self.metadata())
        try:
            async for change in call:
                yield change
        except grpc.aio.AioRpcError as error:
            raise GatewayError.of(error) from None
        finally:
            call.cancel()


# --------------------------------------------------------------------------- sessions
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
        self._outbox.put_nowait(pb.SessionRequest(watch=pb.WatchRequest(from_version=from_version)))
        self._changes: asyncio.Queue[pb.WatchResponse | GatewayError | None] = asyncio.Queue()
        self._waiting: deque[tuple[str, asyncio.Future[int]]] = deque()
        self._call = client.stub.Session(self._requests(), metadata=client.metadata())
        self._reader = asyncio.create_task(self._read(), name="session-reader")
        self._ended: GatewayError | None = None

    async def _requests(self) -> AsyncIterator[pb.SessionRequest]:
        while (request := await self._outbox.get()) is not None:
            yield request

    async def _read(self) -> None:
        ended: GatewayError | None = None
        try:
            async for response in self._call:
                for change in response.changes:
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
            code = getattr(grpc.StatusCode, refused.code, grpc.StatusCode.UNKNOWN)
            future.set_exception(GatewayError(code, refused.reason, refused.message))
        else:
            future.set_result(result.version)

    async def changes(self) -> AsyncIterator[pb.WatchResponse]:
        """The changes, as Watch streams them; raises the stream's error if it failed."""
        while (item := await self._changes.get()) is not None:
            if isinstance(item, GatewayError):
                raise item
            yield item

    async def _send(self, request: pb.SessionRequest, command_id: str) -> int:
        if self._reader.done():
            raise self._ended or GatewayError(
                grpc.StatusCode.UNAVAILABLE, "SESSION_ENDED", "the session stream ended"
            )
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting.append((command_id, future))
        self._outbox.put_nowait(request)
        return await future

    async def play(
        self, cards: Sequence[str], trick_version: int | None = None, command_id: str = ""
    ) -> int:
        """Play cards; the table's version after the play."""
        command_id = command_id or uuid.uuid4().hex
        play = pb.PlayRequest(cards=list(cards), command_id=command_id)
        if trick_version is not None:
            play.trick_version = trick_version
        return await self._send(pb.SessionRequest(play=play), command_id)

    async def pass_(self, trick_version: int | None = None, command_id: str = "") -> int:
        """Pass; the table's version after it."""
        command_id = command_id or uuid.uuid4().hex
        passing = pb.PassRequest(command_id=command_id)
        if trick_version is not None:
            passing.trick_version = trick_version
        request = pb.SessionRequest()
        getattr(request, "pass").CopyFrom(passing)
        return await self._send(request, command_id)

    async def return_cards(self, cards: Sequence[str], command_id: str = "") -> int:
        """Return cards in the exchange."""
        command_id = command_id or uuid.uuid4().hex
        returning = pb.ReturnCardsRequest(cards=list(cards), command_id=command_id)
        return await self._send(pb.SessionRequest(return_cards=returning), command_id)

    async def host_action(self, choice: str, command_id: str = "") -> int:
        """Host: ``next_round``, ``end_game``, ``play_again`` or ``back_to_lobby``."""
        command_id = command_id or uuid.uuid4().hex
        action = pb.HostActionRequest(
            choice=HOST_CHOICES.get(choice, pb.HOST_CHOICE_UNSPECIFIED), command_id=command_id
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


# --------------------------------------------------------------------------- the bot client
Action = tuple[str, list[str]]


def _strength(card: str) -> int:
    return parse_card(card)


def choose(view: gpb.TableView) -> Action | None:
    """A simple legal move from the view: the weakest play (most cards of it), else pass.

    In the exchange: the weakest cards that may be returned.
    """
    legal = list(view.round.legal)
    if not legal:
        return None
    gives = [list(a.cards) for a in legal if a.verb == "give"]
    if gives:
        return "give", min(gives, key=lambda cards: sorted(map(_strength, cards)))
    plays = [list(a.cards) for a in legal if a.verb == "play"]
    if plays:
        return "play", min(plays, key=lambda cards: (min(map(_strength, cards)) // 4, -len(cards)))
    if any(a.verb == "pass" for a in legal):
        return "pass", []
    return None


Policy = Callable[[gpb.TableView], Action | None]


@dataclass
class SeatLog:
    """What a bot client saw and did."""

    responses: list[pb.WatchResponse] = field(default_factory=list)
    actions: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    reconnects: int = 0

    @property
    def last_view(self) -> gpb.TableView | None:
        return self.responses[-1].view if self.responses else None


class SeatActions(Protocol):
    """What a seat does: through its calls (:class:`GatewayClient`) or a :class:`Session`."""

    async def play(
        self, cards: Sequence[str], trick_version: int | None = None, command_id: str = ""
    ) -> int: ...

    async def pass_(self, trick_version: int | None = None, command_id: str = "") -> int: ...

    async def return_cards(self, cards: Sequence[str], command_id: str = "") -> int: ...

    async def host_action(self, choice: str, command_id: str = "") -> int: ...


async def act(
    client: SeatActions, view: gpb.TableView, policy: Policy = choose, command_id: str = ""
) -> int | None:
    """Take the policy's action on ``view``; the version after it, None when idle."""
    action = policy(view)
    if action is None:
        return None
    verb, cards = action
    rapid = not view.round.HasField("to_act")
    trick = view.round.trick_version if rapid else None
    if verb == "give":
        return await client.return_cards(cards, command_id=command_id)
    if verb == "play":
        return await client.play(cards, trick_version=trick, command_id=command_id)
    return await client.pass_(trick_version=trick, command_id=command_id)


async def play_seat(
    client: GatewayClient,
    *,
    policy: Policy = choose,
    host_rounds: int | None = None,
    until: Callable[[gpb.TableView], bool] | None = None,
    on_change: Callable[[pb.WatchResponse], None] | None = None,
    log: SeatLog | None = None,
    keep: bool = True,
    from_version: int = 0,
    session: bool = False,
) -> SeatLog:
    """Play the client's seat from its watch stream until the game is over (or ``until``).

    With ``host_rounds``, the client is the host: between rounds it asks for
    the next round, and ends the game after that many rounds. The stream
    starts with a snapshot, or after ``from_version``, and is resumed from
    the last version after a dropped connection. With ``session``, it
    watches and acts on one Session stream instead of Watch and calls.
    """
    log = log or SeatLog()
    last_version = from_version
    # A replayed past is watched, not acted on: act from the table's present version.
    acted_to = (await client.get_table()).version if from_version else 0
    unanswered: gpb.TableView | None = None  # a view whose action the connection lost

    async def decide(seat: SeatActions, view: gpb.TableView) -> None:
        """Act on ``view`` if it calls for it. The command id is the view's version: sent
        again after a lost connection, a command that went through runs only once."""
        nonlocal acted_to, unanswered
        if view.version < acted_to:
            return  # our last action is not in this view yet
        command_id = f"v{view.version}"
        unanswered = view
        if host_rounds is not None and view.phase == "between_rounds":
            choice = "end_game" if view.round.round_no >= host_rounds else "next_round"
            acted_to = await _tolerant(seat.host_action(choice, command_id), log) or acted_to
        elif view.phase == "round":
            after = await _tolerant(act(seat, view, policy, command_id), log)
            if after is not None:
                log.actions += 1
                acted_to = after
        unanswered = None

    while True:
        opened = client.session(last_version) if session else None
        seat: SeatActions = opened if opened is not None else client
        changes = opened.changes() if opened is not None else client.watch(last_version)
        try:
            if unanswered is not None:  # nothing new may come to act on: send it again
                await decide(seat, unanswered)
            async for change in changes:
                last_version = change.version
                if keep:
                    log.responses.append(change)
                if on_change is not None:
                    on_change(change)
                view = change.view
                if view.phase == "game_over" or (until is not None and until(view)):
                    return log
                await decide(seat, view)
            return log
        except GatewayError as error:
            if error.code not in RESUMABLE:
                raise
            log.reconnects += 1
            await asyncio.sleep(0.2)
        finally:
            if opened is not None:
                await opened.close()


async def _tolerant(call: Awaitable[int | None], log: SeatLog) -> int | None:
    """The call's result; a refusal (lost race, the timer was faster) is counted and skipped.

    A lost connection is raised: the caller reconnects and sends the command again.
    """
    try:
        return await call
    except GatewayError as error:
        if error.code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
            raise
        if error.code in RESUMABLE and error.reason in (
            "",
            "UPSTREAM_UNAVAILABLE",
            "SESSION_ENDED",
        ):
            raise
        log.refused[error.reason] = log.refused.get(error.reason, 0) + 1
        return None


@contextlib.asynccontextmanager
async def connected(address: str) -> AsyncIterator[GatewayClient]:
    """A client on its own channel, closed afterwards."""
    client = GatewayClient.connect(address)
    try:
        yield client
    finally:
        await client.close()
