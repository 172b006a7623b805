"""The services behind the gateway, as ports, and the adapters of scoring, players, tournaments.

The table service's adapter is the one table client every caller shares
(:class:`president.servicekit.table_client.TableClient`). A refusal from a
service is passed on unchanged (its status and ErrorInfo) as a
:class:`ServiceError`; an unreachable service is UNAVAILABLE with the reason
UPSTREAM_UNAVAILABLE.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import grpc

from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.players.v1 import players_pb2 as ppb
from president.players.v1 import players_pb2_grpc
from president.scoring.v1 import scoring_pb2 as spb
from president.scoring.v1 import scoring_pb2_grpc
from president.servicekit.channels import internal_channel
from president.servicekit.config import KEEPALIVE, Keepalive
from president.servicekit.grpc_errors import aio_error_info, reraise_remote
from president.servicekit.table_client import called, unreachable
from president.servicekit.tls import PLAINTEXT, TlsSettings
from president.table.v1 import table_pb2 as tpb
from president.tournaments.v1 import tournaments_pb2_grpc

T = TypeVar("T")
CALL_TIMEOUT = 15.0


class TablePort(Protocol):
    """The table service as the gateway uses it (the one table client,
    :class:`~president.servicekit.table_client.TableClient`)."""

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


class NamesPort(Protocol):
    """Accounts' display names, as the players service keeps them."""

    async def display_names(self, account_ids: list[str]) -> dict[str, str]:
        """The names of those of these accounts the players service knows."""


class TournamentPort(Protocol):
    """The tournament service as the gateway uses it: each call passed through."""

    async def call(self, method: str, request: Any) -> Any:
        """Run ``method`` (one of :attr:`GrpcTournaments.METHODS`) with ``request``; its
        answer (a refusal is raised)."""


class _Lazy:
    """A channel opened on first use, inside the running event loop."""

    def __init__(
        self,
        address: str,
        stub: Callable[[grpc.aio.Channel], Any],
        tls: TlsSettings,
        keepalive: Keepalive,
    ) -> None:
        self._address = address
        self._tls = tls
        self._keepalive = keepalive
        self._make_stub = stub
        self._channel: grpc.aio.Channel | None = None
        self._stub_instance: Any = None

    @property
    def _stub(self) -> Any:
        if self._stub_instance is None:
            self._channel = internal_channel(self._address, self._tls, self._keepalive)
            self._stub_instance = self._make_stub(self._channel)
        return self._stub_instance

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()


class GrpcScoring(_Lazy):
    """:class:`ScoringPort` and :class:`RatingsPort` over the scoring service's gRPC API."""

    RATINGS_METHODS = frozenset({"GetRatings", "GetLeaderboard", "GetHistory", "GetHeadToHead"})

    def __init__(
        self, address: str, tls: TlsSettings = PLAINTEXT, keepalive: Keepalive = KEEPALIVE
    ) -> None:
        super().__init__(address, scoring_pb2_grpc.ScoringServiceStub, tls, keepalive)

    async def ratings_call(self, method: str, request: Any) -> Any:
        if method not in self.RATINGS_METHODS:
            raise ValueError(f"no ratings call {method!r}")
        return await called(
            lambda: getattr(self._stub, method)(request, timeout=CALL_TIMEOUT), "scoring"
        )

    async def game_results(self, table_id: str) -> list[spb.GameResult]:
        request = spb.GetGameResultsRequest(table_id=table_id)
        answer = await self._read(lambda: self._stub.GetGameResults(request, timeout=CALL_TIMEOUT))
        return [] if answer is None else list(answer.games)

    async def processed_version(self, table_id: str) -> int:
        request = spb.GetStandingsRequest(table_id=table_id)
        answer = await self._read(lambda: self._stub.GetStandings(request, timeout=CALL_TIMEOUT))
        return 0 if answer is None else int(answer.version)

    @staticmethod
    async def _read(call: Callable[[], Awaitable[T]]) -> T | None:
        """A read model's answer, None while scoring has not seen the table (NOT_FOUND);
        UPSTREAM_UNAVAILABLE while scoring is away, whatever its ErrorInfo."""
        try:
            return await call()
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return None
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise unreachable("scoring") from None
            reraise_remote(error, await aio_error_info(error))


class GrpcPlayers(_Lazy):
    """:class:`PlayersPort` over the players service's gRPC API."""

    METHODS = frozenset(
        {"CreateGuest", "Register", "LogIn", "Refresh", "LogOut", "LogOutEverywhere"}
    )

    def __init__(
        self, address: str, tls: TlsSettings = PLAINTEXT, keepalive: Keepalive = KEEPALIVE
    ) -> None:
        super().__init__(address, players_pb2_grpc.PlayersServiceStub, tls, keepalive)

    async def call(self, method: str, request: Any) -> Any:
        if method not in self.METHODS:
            raise ValueError(f"no account call {method!r}")
        return await called(
            lambda: getattr(self._stub, method)(request, timeout=CALL_TIMEOUT), "players"
        )

    async def revocations(self) -> list[ppb.Revocation]:
        response: ppb.ListRevocationsResponse = await called(
            lambda: self._stub.ListRevocations(ppb.ListRevocationsRequest(), timeout=CALL_TIMEOUT),
            "players",
        )
        return list(response.revocations)

    async def display_names(self, account_ids: list[str]) -> dict[str, str]:
        response: ppb.GetDisplayNamesResponse = await called(
            lambda: self._stub.GetDisplayNames(
                ppb.GetDisplayNamesRequest(account_ids=account_ids), timeout=CALL_TIMEOUT
            ),
            "players",
        )
        return dict(response.display_names)


class GrpcTournaments(_Lazy):
    """:class:`TournamentPort` over the tournament service's gRPC API."""

    METHODS = frozenset(
        {
            "CreateTournament",
            "ListTournaments",
            "GetTournament",
            "EnterTournament",
            "WithdrawTournament",
            "InviteToTournament",
            "CancelTournament",
        }
    )

    def __init__(
        self, address: str, tls: TlsSettings = PLAINTEXT, keepalive: Keepalive = KEEPALIVE
    ) -> None:
        super().__init__(address, tournaments_pb2_grpc.TournamentServiceStub, tls, keepalive)

    async def call(self, method: str, request: Any) -> Any:
        if method not in self.METHODS:
            raise ValueError(f"no tournament call {method!r}")
        return await called(
            lambda: getattr(self._stub, method)(request, timeout=CALL_TIMEOUT), "tournament"
        )
