"""The one client of the table service: every caller (the gateway, the timer, scoring, tests)
talks to it through :class:`TableClient`.

Commands travel on one long-lived ExecuteCommands stream
(:mod:`president.servicekit.command_stream`), where a message costs a fraction
of a call. With lease owners (table leases on), a table's commands go
straight to the replica holding its lease, on a stream of their own;
otherwise, or when that replica does not answer, to ``address``, whose
replica forwards them to the holder.

Every refusal is raised as a :class:`ServiceError` with the table service's
status and ErrorInfo; an unreachable service is UNAVAILABLE with the reason
UPSTREAM_UNAVAILABLE. The timer's calls (:meth:`TableClient.timeout`,
:meth:`TableClient.move_on`) answer with a :class:`TimeoutResult` instead.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

import grpc

from president.events.v1 import events_pb2 as events_pb
from president.game.v1 import game_pb2 as gpb
from president.servicekit.channels import internal_channel
from president.servicekit.command_stream import CommandStream
from president.servicekit.config import KEEPALIVE, Keepalive
from president.servicekit.errors import Code, ServiceError
from president.servicekit.grpc_errors import aio_error_info, reraise_remote
from president.servicekit.tls import PLAINTEXT, TlsSettings
from president.table.v1 import table_pb2 as pb
from president.table.v1 import table_pb2_grpc

T = TypeVar("T")
CALL_TIMEOUT_SECONDS = 15.0
#: Codes saying the table moved on (the timer's key is stale, or the round is over).
MOVED_ON = (Code.ABORTED, Code.FAILED_PRECONDITION)
#: Codes no retry can fix.
REFUSED = (Code.INVALID_ARGUMENT, Code.PERMISSION_DENIED, Code.UNAUTHENTICATED, Code.OUT_OF_RANGE)

#: The most events the table service returns for one ReadEvents (for limit 0 too).
MAX_READ_EVENTS = 5000


async def read_pages(
    fetch: Callable[[int, int], Awaitable[Sequence[events_pb.EventEnvelope]]],
    after_version: int,
    limit: int = 0,
    page: int = MAX_READ_EVENTS,
) -> list[events_pb.EventEnvelope]:
    """Every event after ``after_version`` (at most ``limit``; 0: all), ``page`` at a time.

    ``fetch(after, count)`` is one ReadEvents; a page shorter than asked is the end.
    """
    out: list[events_pb.EventEnvelope] = []
    after = after_version
    while True:
        count = min(page, limit - len(out)) if limit else page
        got = await fetch(after, count)
        out.extend(got)
        if len(got) < count or (limit and len(out) >= limit):
            return out
        after = got[-1].version


class TimeoutResult(enum.Enum):
    """How the table answered a Timeout."""

    ACTED = "acted"  # the server acted for the seat(s)
    STALE = "stale"  # the table moved on: nothing to do
    GONE = "gone"  # no such table
    REFUSED = "refused"  # a request the table will never accept: a bug, logged
    RETRY = "retry"  # the table could not answer now


class LeaseHolders(Protocol):
    """Which replica holds a table's lease (``gateway/upstream/owners.py`` reads the bucket)."""

    async def owner(self, table_id: str) -> str | None:
        """The holder's address, or None (no lease, or no way to know)."""

    def forget(self, table_id: str) -> None:
        """The holder did not answer: look again next time."""


def unreachable(service: str = "table") -> ServiceError:
    """A service that cannot be reached right now."""
    return ServiceError(
        Code.UNAVAILABLE,
        "UPSTREAM_UNAVAILABLE",
        f"the {service} service cannot be reached right now: try again shortly",
    )


async def called(call: Callable[[], Awaitable[T]], service: str = "table") -> T:
    """The answer of a gRPC call; its refusal raised as a ServiceError (UPSTREAM_UNAVAILABLE
    when the service is away)."""
    try:
        return await call()
    except grpc.aio.AioRpcError as error:
        info = await aio_error_info(error)
        if info is None and error.code() in (
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.DEADLINE_EXCEEDED,
        ):
            raise unreachable(service) from None
        reraise_remote(error, info)


class TableClient:
    """A gRPC client of the table service; its channel opens on first use (inside the loop)."""

    def __init__(
        self,
        address: str,
        *,
        page: int = MAX_READ_EVENTS,
        owners: LeaseHolders | None = None,
        tls: TlsSettings = PLAINTEXT,
        keepalive: Keepalive = KEEPALIVE,
    ) -> None:
        self._tls = tls
        self._keepalive = keepalive
        self.address = address
        #: Events asked for per ReadEvents (the table service returns at most 5,000).
        self.page = page
        self._owners = owners
        self._channel: grpc.aio.Channel | None = None
        self._stub_instance: Any = None
        #: Commands travel on one ExecuteCommands stream, opened on first use.
        self._commands = CommandStream(self._open_commands)
        self._replicas: dict[str, TableClient] = {}

    @property
    def _stub(self) -> Any:
        if self._stub_instance is None:
            self._channel = internal_channel(self.address, self._tls, self._keepalive)
            self._stub_instance = table_pb2_grpc.TableServiceStub(self._channel)
        return self._stub_instance

    def _open_commands(self, requests: AsyncIterator[pb.ExecuteCommandsRequest]) -> Any:
        return self._stub.ExecuteCommands(requests)  # the channel opens on first use

    # -- commands ----------------------------------------------------------------------
    async def submit(self, request: pb.ExecuteCommandRequest) -> pb.ExecuteCommandResponse:
        """Have the table service run a command; its answer (a refusal is raised)."""
        owners = self._owners
        owner = await owners.owner(request.table_id) if owners is not None else None
        if owners is not None and owner is not None and owner != self.address:
            try:
                return await self._replica(owner).submit(request)
            except ServiceError as error:
                if error.reason != "UPSTREAM_UNAVAILABLE":
                    raise
                # The holder does not answer: the service address takes over (a retry
                # of the same command id runs once), and its connection goes.
                owners.forget(request.table_id)
                gone = self._replicas.pop(owner, None)
                if gone is not None:
                    await gone.close()
        return await self._commands.send(request)

    async def create_table(self, request: pb.CreateTableRequest) -> pb.CreateTableResponse:
        """Create a table."""
        response: pb.CreateTableResponse = await called(
            lambda: self._stub.CreateTable(request, timeout=CALL_TIMEOUT_SECONDS)
        )
        return response

    async def timeout(
        self, table_id: str, timer_key: int, game_no: int, round_no: int
    ) -> tuple[TimeoutResult, str]:
        """Ask the table to act on an expired timer; the result and a word on why."""
        request = pb.TimeoutRequest(
            table_id=table_id, timer_key=timer_key, game_no=game_no, round_no=round_no
        )
        return await _answered(
            called(lambda: self._stub.Timeout(request, timeout=CALL_TIMEOUT_SECONDS))
        )

    async def move_on(
        self, table_id: str, kind: str, timer_key: int, game_no: int, round_no: int
    ) -> tuple[TimeoutResult, str]:
        """Ask a table that waited too long (``kind``) to move on by itself, as the server."""
        request = pb.ExecuteCommandRequest(
            table_id=table_id,
            command_id=f"move-on-{table_id}-{game_no}-{round_no}-{kind}-{timer_key}",
            actor=gpb.Actor(player_id="server"),
            command=gpb.Command(
                move_on=gpb.MoveOn(
                    kind=kind, game_no=game_no, round_no=round_no, timer_key=timer_key
                )
            ),
        )
        return await _answered(self.submit(request))

    # -- queries -----------------------------------------------------------------------
    async def get_table(self, table_id: str, seat: int | None) -> gpb.TableView:
        """The table as ``seat`` (None: a spectator) sees it."""
        request = pb.GetTableRequest(table_id=table_id)
        if seat is not None:
            request.seat = seat
        response: pb.GetTableResponse = await called(
            lambda: self._stub.GetTable(request, timeout=CALL_TIMEOUT_SECONDS)
        )
        return response.view

    async def read_events(
        self, table_id: str, after_version: int, limit: int = 0
    ) -> list[events_pb.EventEnvelope]:
        """The table's stored events after ``after_version`` (at most ``limit``; 0: all), in
        version order, not redacted, read a page at a time."""

        async def fetch(after: int, count: int) -> Sequence[events_pb.EventEnvelope]:
            request = pb.ReadEventsRequest(table_id=table_id, after_version=after, limit=count)
            response: pb.ReadEventsResponse = await called(
                lambda: self._stub.ReadEvents(request, timeout=CALL_TIMEOUT_SECONDS)
            )
            return list(response.events)

        return await read_pages(fetch, after_version, limit, self.page)

    async def list_tables(self, request: pb.ListTablesRequest) -> list[pb.TableSummary]:
        """The tables the request asks for."""
        response: pb.ListTablesResponse = await called(
            lambda: self._stub.ListTables(request, timeout=CALL_TIMEOUT_SECONDS)
        )
        return list(response.tables)

    async def list_commitments(
        self, day: str, after_seq: int, limit: int
    ) -> list[events_pb.CommitmentEntry]:
        """A page of the public commitment feed."""
        request = pb.ListCommitmentsRequest(day=day, after_seq=after_seq, limit=limit)
        response: pb.ListCommitmentsResponse = await called(
            lambda: self._stub.ListCommitments(request, timeout=CALL_TIMEOUT_SECONDS)
        )
        return list(response.entries)

    # -- internals ---------------------------------------------------------------------
    def _replica(self, address: str) -> TableClient:
        """One replica of the table service, reached directly (its channel opens on first use)."""
        replica = self._replicas.get(address)
        if replica is None:
            replica = self._replicas[address] = TableClient(
                address, page=self.page, tls=self._tls, keepalive=self._keepalive
            )
        return replica

    async def close(self) -> None:
        await self._commands.close()
        for replica in self._replicas.values():
            await replica.close()
        self._replicas.clear()
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
            self._stub_instance = None


async def _answered(call: Awaitable[object]) -> tuple[TimeoutResult, str]:
    """How the table answered a call made for the timer."""
    try:
        await call
    except ServiceError as error:
        code = error.status
        detail = f"{code.name}: {error.message}"
        if code in MOVED_ON:
            return TimeoutResult.STALE, detail
        if code == Code.NOT_FOUND:
            return TimeoutResult.GONE, detail
        if code in REFUSED:
            return TimeoutResult.REFUSED, detail
        return TimeoutResult.RETRY, detail
    return TimeoutResult.ACTED, "OK"
