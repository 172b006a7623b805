"""The table service's gRPC servicer: protobuf in and out, :class:`TableApp` does the work.

Each call runs its use case through the :class:`CommandExecutor` (in a
worker thread, or a quick play on the event loop: see
:mod:`president.services.table.executor`), and every refusal becomes a rich
status with its ErrorInfo reason here (:func:`refusal`): the use cases raise
domain errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any, NoReturn, TypeVar

import grpc
import structlog

from president.game.v1 import game_pb2 as gpb
from president.hosting.errors import (
    CommandConflict,
    RateExceeded,
    TableExists,
    TableNotFound,
    VersionMismatch,
)
from president.hosting.signatures import Signer
from president.rules.errors import ErrorCode, Rejected
from president.rules.options import OptionError
from president.servicekit.batching import take_ready
from president.servicekit.channels import internal_channel
from president.servicekit.checks import invalid
from president.servicekit.config import KEEPALIVE, Keepalive
from president.servicekit.errors import (
    RETRY_AFTER,
    STATUS_OF_CODE,
    Code,
    ServiceError,
    from_domain,
    store_unavailable,
    to_refusal,
)
from president.servicekit.feed_stream import entry_message
from president.servicekit.grpc_errors import abort, aio_error_info, reraise_remote
from president.servicekit.metrics import REJECTIONS, observe_call
from president.servicekit.nats import envelope, valid_table_id
from president.servicekit.tls import PLAINTEXT, TlsSettings
from president.services.table.app import TableApp
from president.services.table.commands import Translated, translate
from president.services.table.commitments import list_commitments
from president.services.table.directory import Query, Summary
from president.services.table.executor import CommandExecutor
from president.services.table.leases import Leases
from president.store import CommandIdReused, ConcurrencyConflict, is_transient
from president.table.v1 import table_pb2 as pb
from president.table.v1 import table_pb2_grpc

T = TypeVar("T")
Context = grpc.aio.ServicerContext[Any, Any]
FORWARDED = "x-president-forwarded-by"
FORWARD_SECONDS = 60.0
_log: Any = structlog.get_logger(service="table")


def refusal(error: Exception) -> ServiceError:
    """The gRPC refusal of any error a use case raises (re-raises unexpected ones)."""
    if isinstance(error, ServiceError):
        return error
    if isinstance(error, TableNotFound):
        return ServiceError(Code.NOT_FOUND, "TABLE_NOT_FOUND", str(error))
    if isinstance(error, TableExists):
        return ServiceError(Code.ALREADY_EXISTS, "TABLE_EXISTS", str(error))
    if isinstance(error, VersionMismatch):
        return ServiceError(
            STATUS_OF_CODE[ErrorCode.STALE],
            ErrorCode.STALE.value,
            str(error),
            {"version": str(error.actual)},
        )
    if isinstance(error, RateExceeded):
        return ServiceError(
            Code.RESOURCE_EXHAUSTED,
            error.reason,
            str(error),
            {RETRY_AFTER: f"{error.wait_seconds:.1f}"},
        )
    if isinstance(error, ConcurrencyConflict):
        return ServiceError(
            Code.ABORTED,
            "CONFLICT",
            "another replica kept changing this table: reload it and try again",
        )
    if isinstance(error, CommandIdReused | CommandConflict):
        return invalid("COMMAND_ID_REUSED", str(error))
    if isinstance(error, Rejected | OptionError):
        return from_domain(error)
    if is_transient(error):
        _log.warning("store unavailable", error=repr(error))
        return store_unavailable()
    raise error


#: The summaries listed lately, each encoded as a ListTablesResponse of it alone, by
#: table and version: a table at one version always shows the same, and the lobby lists
#: the same tables again and again (their options are most of each one).
_ENCODED: dict[tuple[str, int], bytes] = {}
KEPT_ENCODED = 4_096


def summaries_message(summaries: list[Summary]) -> pb.ListTablesResponse:
    """The ListTablesResponse of ``summaries``, in order: their encodings joined (the
    encoding of a repeated field is its items' one after the other) and read once."""
    parts = []
    for summary in summaries:
        key = (summary.table_id, summary.version)
        encoded = _ENCODED.get(key) if summary.version else None
        if encoded is None:
            encoded = pb.ListTablesResponse(tables=[summary_message(summary)]).SerializeToString()
            if summary.version:
                if len(_ENCODED) >= KEPT_ENCODED:
                    _ENCODED.clear()  # the busy tables come back at once
                _ENCODED[key] = encoded
        parts.append(encoded)
    return pb.ListTablesResponse.FromString(b"".join(parts))


def summary_message(summary: Summary) -> pb.TableSummary:
    """The protobuf of a table summary."""
    return pb.TableSummary(
        table_id=summary.table_id,
        options=gpb.TableOptions(preset=summary.preset, options=summary.options),
        seated=summary.seated,
        seat_count=summary.seat_count,
        phase=summary.phase,
        name=summary.name,
        host_name=summary.host_name,
        visibility=summary.visibility,
    )


class TableServicer(table_pb2_grpc.TableServiceServicer):
    """CreateTable, ExecuteCommand, Timeout, GetTable, ReadEvents, ListTables.

    With leases, a call for a table another replica holds is forwarded to it
    (once: a forwarded call is always served where it lands).
    """

    def __init__(
        self,
        app: TableApp,
        leases: Leases | None = None,
        tls: TlsSettings = PLAINTEXT,
        signer: Signer | None = None,
        keepalive: Keepalive = KEEPALIVE,
    ) -> None:
        self._app = app
        self._signer = signer
        self._leases = leases
        self._tls = tls
        self._keepalive = keepalive
        self._peers: dict[str, tuple[grpc.aio.Channel, Any]] = {}
        #: Where each call runs: in a worker thread, or a quick play on the event loop.
        self.executor = CommandExecutor(app)

    async def _forward(self, table_id: str, method: str, request: Any, context: Context) -> Any:
        """The holder's answer when another replica holds the table, else None (serve here)."""
        if _forwarded(context):
            return None
        try:
            return await self._forward_to_holder(table_id, method, request)
        except ServiceError as refused:
            await abort(context, refused)

    async def _forward_to_holder(self, table_id: str, method: str, request: Any) -> Any:
        """The holder's answer when another replica holds the table, else None.

        Raises the holder's refusal as a :class:`ServiceError`.
        """
        leases = self._leases
        if leases is None or not valid_table_id(table_id):
            return None
        owner = await leases.owner(table_id)
        if owner == leases.address:
            return None
        if owner not in self._peers:
            channel = internal_channel(owner, self._tls, self._keepalive)
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
            reraise_remote(error, info)

    async def close(self) -> None:
        """Close the channels to other replicas."""
        for channel, _ in self._peers.values():
            with contextlib.suppress(Exception):
                await channel.close()
        self._peers.clear()

    async def _run(self, context: Context, work: Callable[[], T]) -> T:
        try:
            return await self.executor.in_worker(work)
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
                request.name,
            ),
        )
        return pb.CreateTableResponse(table_id=table.table_id, version=table.version)

    async def ExecuteCommand(
        self, request: pb.ExecuteCommandRequest, context: Context
    ) -> pb.ExecuteCommandResponse:
        """One command, as one answer of :meth:`ExecuteCommands` (the same steps)."""
        try:
            return await self._command(request, context)
        except Exception as error:
            await abort(context, _refused(error))

    async def ExecuteCommands(
        self, requests: AsyncIterator[pb.ExecuteCommandsRequest], context: Context
    ) -> AsyncIterator[pb.ExecuteCommandsResponse]:
        """Each command as ExecuteCommand runs it, several at once, answered as they finish:
        the answers ready together (one commit of the store often ends several) in one message."""
        answers: asyncio.Queue[pb.TaggedAnswer | None] = asyncio.Queue()
        running: set[asyncio.Task[None]] = set()

        async def answer(item: pb.TaggedCommand) -> None:
            started = time.perf_counter()
            try:
                done = await self._command(item.command, context)
                out = pb.TaggedAnswer(request_id=item.request_id, done=done)
                code = "OK"
            except Exception as error:
                rejection = _refused(error)
                out = pb.TaggedAnswer(request_id=item.request_id, refused=to_refusal(rejection))
                code = rejection.status.name
            observe_call("table", "ExecuteCommands", code, time.perf_counter() - started)
            answers.put_nowait(out)

        async def read() -> None:
            try:
                async for message in requests:
                    for item in message.commands:
                        task = asyncio.create_task(answer(item))
                        running.add(task)
                        task.add_done_callback(running.discard)
                await asyncio.gather(*running)
            finally:
                answers.put_nowait(None)

        reader = asyncio.create_task(read(), name="execute-commands-reader")
        try:
            while (first := await answers.get()) is not None:
                ready, end = take_ready(first, answers)
                yield pb.ExecuteCommandsResponse(answers=ready)
                if end:
                    return
        finally:
            reader.cancel()
            for task in list(running):
                task.cancel()

    async def _command(
        self, request: pb.ExecuteCommandRequest, context: Context
    ) -> pb.ExecuteCommandResponse:
        """The one path of a command: to the lease holder when another replica holds the table
        (once: a command forwarded here is served here), else run here."""
        if not _forwarded(context):
            done = await self._forward_to_holder(request.table_id, "ExecuteCommand", request)
            if done is not None:
                return done  # type: ignore[no-any-return]
        return await self._run_command(request)

    async def _run_command(self, request: pb.ExecuteCommandRequest) -> pb.ExecuteCommandResponse:
        """Run a command on this replica, where the executor says."""
        command_id = request.command_id or _fresh_command_id()
        expected = request.expected_version if request.HasField("expected_version") else None

        def prepare() -> Translated:
            if not request.actor.player_id:
                raise ServiceError(
                    Code.INVALID_ARGUMENT,
                    "MISSING_ACTOR",
                    "say who acts: actor.player_id",
                )
            return translate(request.command)

        outcome = await self.executor.handle_command(
            request.command.WhichOneof("kind"),
            request.table_id,
            prepare,
            command_id,
            request.actor,
            expected,
        )
        return pb.ExecuteCommandResponse(
            version=outcome.version,
            events=outcome.events,
            committed=[envelope(stored, self._signer) for stored in outcome.committed],
        )

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
        return pb.ReadEventsResponse(events=[envelope(event, self._signer) for event in stored])

    async def ListTables(
        self, request: pb.ListTablesRequest, context: Context
    ) -> pb.ListTablesResponse:
        query = Query(
            open_only=request.open_only,
            listed_only=request.listed_only,
            preset=request.preset,
            min_free_seats=request.min_free_seats,
            limit=request.limit,
            after=request.after_table_id,
        )
        summaries = await self._run(
            context, lambda: self._app.list_tables(request.open_only, query)
        )
        return summaries_message(summaries)

    async def ListCommitments(
        self, request: pb.ListCommitmentsRequest, context: Context
    ) -> pb.ListCommitmentsResponse:
        entries = await self._run(
            context,
            lambda: list_commitments(
                self._app.store, request.day, request.after_seq, request.limit
            ),
        )
        return pb.ListCommitmentsResponse(entries=[entry_message(e) for e in entries])


def _forwarded(context: Context) -> bool:
    """The call came forwarded from another replica (it is served here, never again forwarded)."""
    return any(key == FORWARDED for key, _ in context.invocation_metadata() or ())


def _fresh_command_id() -> str:
    return f"cmd-{uuid.uuid4().hex}"


def _refused(error: Exception) -> ServiceError:
    """The refusal of a failed use case (counted); an unexpected failure is logged, INTERNAL."""
    try:
        rejection = refusal(error)
    except Exception:
        _log.exception("table call failed", error=repr(error))
        rejection = ServiceError(Code.INTERNAL, "INTERNAL", "the table service failed; see its log")
    REJECTIONS.labels(rejection.reason).inc()
    return rejection


async def _refuse(context: Context, error: Exception) -> NoReturn:
    await abort(context, _refused(error))
