"""The table service's gRPC servicer: protobuf in and out, :class:`TableApp` does the work.

Each call runs its use case in a worker thread (the store and the dealer
client are synchronous; :class:`TableHost` serialises commands to one
table), and turns every refusal into a rich status with its ErrorInfo reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import grpc
import structlog

from president.game.v1 import game_pb2 as gpb
from president.service.errors import ServiceError, abort
from president.service.metrics import REJECTIONS
from president.service.nats import envelope
from president.table.v1 import table_pb2 as pb
from president.table.v1 import table_pb2_grpc
from services.table.app import TableApp, refusal
from services.table.commands import translate
from services.table.directory import Summary

T = TypeVar("T")
Context = grpc.aio.ServicerContext[Any, Any]
MAX_UINT32 = 2**32 - 1
_log: Any = structlog.get_logger()


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
    """CreateTable, ExecuteCommand, Timeout, GetTable, ReadEvents, ListTables."""

    def __init__(self, app: TableApp) -> None:
        self._app = app

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
        outcome = await self._run(
            context,
            lambda: self._app.timeout(
                request.table_id, request.timer_key, request.game_no, request.round_no
            ),
        )
        return pb.TimeoutResponse(version=outcome.version)

    async def GetTable(self, request: pb.GetTableRequest, context: Context) -> pb.GetTableResponse:
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
    import uuid

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
