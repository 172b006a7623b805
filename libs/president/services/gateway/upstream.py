"""The services behind the gateway, as ports, and their adapters over grpc.aio.

A refusal from the table or scoring service is passed on unchanged (its
status and ErrorInfo) as a :class:`ServiceError`; an unreachable service is
UNAVAILABLE with the reason UPSTREAM_UNAVAILABLE.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol, TypeVar

import grpc

from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.players.v1 import players_pb2 as ppb
from president.players.v1 import players_pb2_grpc
from president.scoring.v1 import scoring_pb2 as spb
from president.scoring.v1 import scoring_pb2_grpc
from president.servicekit.channels import internal_channel
from president.servicekit.command_stream import CommandStream, Observer
from president.servicekit.errors import ServiceError, aio_error_info, reraise_remote
from president.servicekit.table_client import MAX_READ_EVENTS, read_pages
from president.servicekit.tls import PLAINTEXT, TlsSettings
from president.services.gateway.owners import LeaseOwners
from president.table.v1 import table_pb2 as tpb
from president.table.v1 import table_pb2_grpc

T = TypeVar("T")
CALL_TIMEOUT = 15.0


class TablePort(Protocol):
    """The table service as the gateway uses it."""

    async def create_table(self, request: tpb.CreateTableRequest) -> tpb.CreateTableResponse:
        """Create a table."""

    async def submit(self, request: tpb.ExecuteCommandRequest) -> tpb.ExecuteCommandResponse:
        """Have the table service run a command; its answer (a refusal is raised)."""

    async def get_table(self, table_id: str, seat: int | None) -> gpb.TableView:
        """The table as ``seat`` (None: a spectator) sees it."""

    async def read_events(
        self, table_id: str, after: int, limit: int = 0
    ) -> list[epb.EventEnvelope]:
        """Stored events after a version (at most ``limit``; 0: all), not redacted."""

    async def list_tables(self, request: tpb.ListTablesRequest) -> list[tpb.TableSummary]:
        """The tables the request asks for."""

    async def list_commitments(
        self, day: str, after_seq: int, limit: int
    ) -> list[epb.CommitmentEntry]:
        """A page of the public commitment feed."""


class ScoringPort(Protocol):
    """The scoring service as the gateway uses it."""

    async def game_results(self, table_id: str) -> list[spb.GameResult]:
        """A table's finished games (empty when scoring has not seen the table)."""

    async def processed_version(self, table_id: str) -> int:
        """The last version of the table scoring has processed (0: none)."""


class RatingsPort(Protocol):
    """Scoring's ratings RPCs as the gateway uses them: each passed through."""

    async def ratings_call(self, method: str, request: Any) -> Any:
        """Run ``method`` (GetRatings, GetLeaderboard, GetHistory, GetHeadToHead) with
        ``request``; its answer (a refusal is raised)."""


class PlayersPort(Protocol):
    """The players service as the gateway uses it: each account call, passed through."""

    async def call(self, method: str, request: Any) -> Any:
        """Run ``method`` (CreateGuest, Register, LogIn, Refresh, LogOut, LogOutEverywhere,
        ListRevocations) with ``request``; its answer (a refusal is raised)."""

    async def revocations(self) -> list[ppb.Revocation]:
        """The revoked sessions whose access tokens may still be presented."""


async def _call(call: Callable[[], Awaitable[T]], service: str = "table") -> T:
    try:
        return await call()
    except grpc.aio.AioRpcError as error:
        if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            info = await aio_error_info(error)
            if info is None:
                raise ServiceError(
                    grpc.StatusCode.UNAVAILABLE,
                    "UPSTREAM_UNAVAILABLE",
                    f"the {service} service cannot be reached right now: try again shortly",
                ) from None
        reraise_remote(error, await aio_error_info(error))


class _Lazy:
    """A channel opened on first use, inside the running event loop."""

    def __init__(
        self, address: str, stub: Callable[[grpc.aio.Channel], Any], tls: TlsSettings
    ) -> None:
        self._address = address
        self._tls = tls
        self._make_stub = stub
        self._channel: grpc.aio.Channel | None = None
        self._stub_instance: Any = None

    @property
    def _stub(self) -> Any:
        if self._stub_instance is None:
            self._channel = internal_channel(self._address, self._tls)
            self._stub_instance = self._make_stub(self._channel)
        return self._stub_instance

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()


class GrpcTables(_Lazy):
    """:class:`TablePort` over the table service's gRPC API.

    With ``owners`` (table leases on), a table's commands go straight to the
    replica holding its lease, on a stream of their own; otherwise, or when
    that replica does not answer, to ``address``.
    """

    def __init__(
        self,
        address: str,
        *,
        page: int = MAX_READ_EVENTS,
        owners: LeaseOwners | None = None,
        tls: TlsSettings = PLAINTEXT,
    ) -> None:
        super().__init__(address, table_pb2_grpc.TableServiceStub, tls)
        #: Events asked for per ReadEvents (the table service returns at most 5,000).
        self.page = page
        #: Commands travel on one ExecuteCommands stream, opened on first use.
        self._commands = CommandStream(self._open_commands)
        self._owners = owners
        self._address = address
        self._replicas: dict[str, GrpcTables] = {}
        self._observers: list[Observer] = []

    def when_written(self, observer: Observer) -> None:
        """Call ``observer`` with each command soon after it is written, to whichever replica
        (:meth:`CommandStream.when_written`)."""
        self._observers.append(observer)
        self._commands.when_written(observer)
        for replica in self._replicas.values():
            replica.when_written(observer)

    async def create_table(self, request: tpb.CreateTableRequest) -> tpb.CreateTableResponse:
        response: tpb.CreateTableResponse = await _call(
            lambda: self._stub.CreateTable(request, timeout=CALL_TIMEOUT)
        )
        return response

    def _open_commands(self, requests: AsyncIterator[tpb.ExecuteCommandsRequest]) -> Any:
        return self._stub.ExecuteCommands(requests)  # the channel opens on first use

    async def submit(self, request: tpb.ExecuteCommandRequest) -> tpb.ExecuteCommandResponse:
        owner = await self._owners.owner(request.table_id) if self._owners else None
        if owner is not None and owner != self._address:
            try:
                return await self._replica(owner).submit(request)
            except ServiceError as error:
                if error.reason != "UPSTREAM_UNAVAILABLE" or self._owners is None:
                    raise
                # The holder does not answer: the service address takes over (a retry
                # of the same command id runs once), and its connection goes.
                self._owners.forget(request.table_id)
                gone = self._replicas.pop(owner, None)
                if gone is not None:
                    await gone.close()
        return await self._commands.send(request)

    def _replica(self, address: str) -> GrpcTables:
        """One replica of the table service, reached directly (its channel opens on first use)."""
        replica = self._replicas.get(address)
        if replica is None:
            replica = self._replicas[address] = GrpcTables(address, page=self.page, tls=self._tls)
            for observer in self._observers:
                replica.when_written(observer)
        return replica

    async def close(self) -> None:
        await self._commands.close()
        for replica in self._replicas.values():
            await replica.close()
        self._replicas.clear()
        await super().close()

    async def get_table(self, table_id: str, seat: int | None) -> gpb.TableView:
        request = tpb.GetTableRequest(table_id=table_id)
        if seat is not None:
            request.seat = seat
        response: tpb.GetTableResponse = await _call(
            lambda: self._stub.GetTable(request, timeout=CALL_TIMEOUT)
        )
        return response.view

    async def read_events(
        self, table_id: str, after: int, limit: int = 0
    ) -> list[epb.EventEnvelope]:
        async def fetch(after: int, count: int) -> list[epb.EventEnvelope]:
            request = tpb.ReadEventsRequest(table_id=table_id, after_version=after, limit=count)
            response: tpb.ReadEventsResponse = await _call(
                lambda: self._stub.ReadEvents(request, timeout=CALL_TIMEOUT)
            )
            return list(response.events)

        return await read_pages(fetch, after, limit, self.page)

    async def list_tables(self, request: tpb.ListTablesRequest) -> list[tpb.TableSummary]:
        response: tpb.ListTablesResponse = await _call(
            lambda: self._stub.ListTables(request, timeout=CALL_TIMEOUT)
        )
        return list(response.tables)

    async def list_commitments(
        self, day: str, after_seq: int, limit: int
    ) -> list[epb.CommitmentEntry]:
        request = tpb.ListCommitmentsRequest(day=day, after_seq=after_seq, limit=limit)
        response: tpb.ListCommitmentsResponse = await _call(
            lambda: self._stub.ListCommitments(request, timeout=CALL_TIMEOUT)
        )
        return list(response.entries)


class GrpcScoring(_Lazy):
    """:class:`ScoringPort` and :class:`RatingsPort` over the scoring service's gRPC API."""

    RATINGS_METHODS = frozenset({"GetRatings", "GetLeaderboard", "GetHistory", "GetHeadToHead"})

    def __init__(self, address: str, tls: TlsSettings = PLAINTEXT) -> None:
        super().__init__(address, scoring_pb2_grpc.ScoringServiceStub, tls)

    async def ratings_call(self, method: str, request: Any) -> Any:
        if method not in self.RATINGS_METHODS:
            raise ValueError(f"no ratings call {method!r}")
        return await _call(
            lambda: getattr(self._stub, method)(request, timeout=CALL_TIMEOUT), "scoring"
        )

    async def game_results(self, table_id: str) -> list[spb.GameResult]:
        request = spb.GetGameResultsRequest(table_id=table_id)
        try:
            response: spb.GetGameResultsResponse = await self._stub.GetGameResults(
                request, timeout=CALL_TIMEOUT
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return []
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise ServiceError(
                    grpc.StatusCode.UNAVAILABLE,
                    "UPSTREAM_UNAVAILABLE",
                    "the scoring service cannot be reached right now: try again shortly",
                ) from None
            reraise_remote(error, await aio_error_info(error))
        return list(response.games)

    async def processed_version(self, table_id: str) -> int:
        request = spb.GetStandingsRequest(table_id=table_id)
        try:
            response: spb.GetStandingsResponse = await self._stub.GetStandings(
                request, timeout=CALL_TIMEOUT
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return 0
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise ServiceError(
                    grpc.StatusCode.UNAVAILABLE,
                    "UPSTREAM_UNAVAILABLE",
                    "the scoring service cannot be reached right now: try again shortly",
                ) from None
            reraise_remote(error, await aio_error_info(error))
        return int(response.version)


class GrpcPlayers(_Lazy):
    """:class:`PlayersPort` over the players service's gRPC API."""

    METHODS = frozenset(
        {"CreateGuest", "Register", "LogIn", "Refresh", "LogOut", "LogOutEverywhere"}
    )

    def __init__(self, address: str, tls: TlsSettings = PLAINTEXT) -> None:
        super().__init__(address, players_pb2_grpc.PlayersServiceStub, tls)

    async def call(self, method: str, request: Any) -> Any:
        if method not in self.METHODS:
            raise ValueError(f"no account call {method!r}")
        return await _call(
            lambda: getattr(self._stub, method)(request, timeout=CALL_TIMEOUT), "players"
        )

    async def revocations(self) -> list[ppb.Revocation]:
        response: ppb.ListRevocationsResponse = await _call(
            lambda: self._stub.ListRevocations(ppb.ListRevocationsRequest(), timeout=CALL_TIMEOUT),
            "players",
        )
        return list(response.revocations)
