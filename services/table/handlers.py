"""The table service's gRPC servicer: protobuf in and out, :class:`TableApp` does the work.

Each call runs its use case in a worker thread (the store and the dealer
client are synchronous; :class:`TableHost` serialises commands to one
table), and turns every refusal into a rich status with its ErrorInfo reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import grpc
import structlog

from president.game.v1 import game_pb2 as gpb
from president.service.channels import internal_channel_options
from president.service.errors import ServiceError, abort, aio_error_info, reraise_remote
from president.service.metrics import REJECTIONS
from president.service.nats import envelope, valid_table_id
from president.table.v1 import table_pb2 as pb
from president.table.v1 import table_pb2_grpc
from services.table.app import TableApp, refusal
from services.table.commands import translate
from services.table.directory import Summary
from services.table.leases import Leases

T = TypeVar("T")
Context = grpc.aio.ServicerContext[Any, Any]
FORWARDED = "x-president-forwarded-by"
FORWARD_SECONDS = 60.0
_log: Any = structlog.get_logger(service="table")


def summary_message(summary: Summary) -> pb.TableSummary:
    """The protobuf of a table summary."""
    return pb.TableSummary(
        table_id=summary.table_id,
        options=gpb.TableOptions(preset=summary.preset, options=summary.options),
        seated=summary.seated,
        seat_count=summary.seat_count,
        phase=summary.phase,
        visibility=summary.visibility,
    )


class TableServicer(table_pb2_grpc.TableServiceServicer):
    """CreateTable, ExecuteCommand, Timeout, GetTable, ReadEvents, ListTables.

    With leases, a call for a table another replica holds is forwarded to it
    (once: a forwarded call is always served where it lands).
    """

    def __init__(self, app: TableApp, leases: Leases | None = None) -> None:
        self._app = app
        self._leases = leases
        self._peers: dict[str, tuple[grpc.aio.Channel, Any]] = {}

    async def _forward(self, table_id: str, method: str, request: Any, context: Context) -> Any:
        """The holder's answer when another replica holds the table, else None (serve here)."""
        leases = self._leases
        if leases is None or not valid_table_id(table_id):
            return None
        if any(key == FORWARDED for key, _ in context.invocation_metadata() or ()):
            return None
        owner = await leases.owner(table_id)
        if owner == leases.address:
            return None
        if owner not in self._peers:
            channel = grpc.aio.insecure_channel(owner, options=internal_channel_options())
            self._peers[owner] = (channel, table_pb2_grpc.TableServiceStub(channel))
        peer = self._peers[owner][1]
        try:
            return await getattr(peer, method)(
                request, timeout=FORWARD_SECONDS, metadata=((FORWARDED, leases.address),)
            )
        except grpc.aio.AioRpcError as error:
            info = await aio_error_info(error)
            if info is None and error.code() in (
                grpc.StatusCode.UNAVAILABLE,
                grpc.StatusCode.DEADLINE_EXCEEDED,
            ):
                # The holder is gone (or hung): take the table over and serve it here.
                _log.warning("lease holder unreachable", table_id=table_id, owner=owner)
                leases.forget(table_id)
                await leases.take_over(table_id)
                return None
            try:
                reraise_remote(error, info)
            except ServiceError as refused:
                await abort(context, refused)

    async def close(self) -> None:
        """Close the channels to other replicas."""
        for channel, _ in self._peers.values():
            with contextlib.suppress(Exception):
                await channel.close()
        self._peers.clear()

    async def _run(self, context: Context, work: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(work)
        except Exception as error:
            await _refuse(context, error)

    async def CreateTable(
        self, request: pb.CreateTableRequest, context: Context
    ) -> pb.CreateTableResponse:
        table = await self._run(
            context,
            lambda: self._app.create(
                request.table_id,
                request.options.preset,
                dict(request.options.options),
                request.seat_count,
                request.visibility,
                request.host_player_id,
                request.command_id,
            ),
        )
        return pb.CreateTableResponse(table_id=table.table_id, version=table.version)

    async def ExecuteCommand(
        self, request: pb.ExecuteCommandRequest, context: Context
    ) -> pb.ExecuteCommandResponse:
        forwarded = await self._forward(request.table_id, "ExecuteCommand", request, context)
        if forwarded is not None:
            return forwarded  # type: ignore[no-any-return]
        expected = request.expected_version if request.HasField("expected_version") else None

        def work() -> Any:
            if not request.actor.player_id:
                raise ServiceError(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "MISSING_ACTOR",
                    "say who acts: actor.player_id (and actor.seat for a seat's command)",
                )
            translated = translate(request.command)
            return self._app.execute(
                request.table_id,
                translated,
                request.command_id or _fresh_command_id(),
                request.actor,
                expected,
            )

        outcome = await self._run(context, work)
        return pb.ExecuteCommandResponse(version=outcome.version, events=outcome.events)

    async def Timeout(self, request: pb.TimeoutRequest, context: Context) -> pb.TimeoutResponse:
        forwarded = await self._forward(request.table_id, "Timeout", request, context)
        if forwarded is not None:
            return forwarded  # type: ignore[no-any-return]
        outcome = await self._run(
            context,
            lambda: self._app.timeout(
                request.table_id, request.timer_key, request.game_no, request.round_no
            ),
        )
        return pb.TimeoutResponse(version=outcome.version)

    async def GetTable(self, request: pb.GetTableRequest, context: Context) -> pb.GetTableResponse:
        forwarded = await self._forward(request.table_id, "GetTable", request, context)
        if forwarded is not None:
            return forwarded  # type: ignore[no-any-return]
        seat = request.seat if request.HasField("seat") else None
        view = await self._run(context, lambda: self._app.view(request.table_id, seat))
        return pb.GetTableResponse(view=view)

    async def ReadEvents(
        self, request: pb.ReadEventsRequest, context: Context
    ) -> pb.ReadEventsResponse:
        stored = await self._run(
            context,
            lambda: self._app.read_events(request.table_id, request.after_version, request.limit),
        )
        return pb.ReadEventsResponse(events=[envelope(event) for event in stored])

    async def ListTables(
        self, request: pb.ListTablesRequest, context: Context
    ) -> pb.ListTablesResponse:
        summaries = await self._run(context, lambda: self._app.list_tables(request.open_only))
        return pb.ListTablesResponse(tables=[summary_message(s) for s in summaries])


def _fresh_command_id() -> str:
    return f"cmd-{uuid.uuid4().hex}"


async def _refuse(context: Context, error: Exception) -> NoReturn:
    try:
        refused = refusal(error)
    except Exception:
        _log.exception("table call failed", error=repr(error))
        refused = ServiceError(
            grpc.StatusCode.INTERNAL, "INTERNAL", "the table service failed; see its log"
        )
    REJECTIONS.labels(refused.reason).inc()
    await abort(context, refused)
