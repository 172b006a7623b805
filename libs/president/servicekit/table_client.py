"""What the stream followers (timer, scoring) ask of the table service: history, timeouts,
and moving a waiting table on."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import grpc

from president.events.v1 import events_pb2 as events_pb
from president.game.v1 import game_pb2 as gpb
from president.servicekit.channels import internal_channel
from president.servicekit.tls import PLAINTEXT, TlsSettings
from president.table.v1 import table_pb2 as pb
from president.table.v1 import table_pb2_grpc

CALL_TIMEOUT_SECONDS = 10.0
#: Codes saying the table moved on (the timer's key is stale, or the round is over).
MOVED_ON = (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION)
#: Codes no retry can fix.
REFUSED = (
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.OUT_OF_RANGE,
)

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


class TableClient:
    """A gRPC client of the table service; the channel opens on first use (inside the loop)."""

    def __init__(
        self, address: str, *, page: int = MAX_READ_EVENTS, tls: TlsSettings = PLAINTEXT
    ) -> None:
        self._tls = tls
        self.address = address
        self.page = page
        self._channel: grpc.aio.Channel | None = None
        self._stub: Any = None

    def _table(self) -> Any:
        if self._stub is None:
            self._channel = internal_channel(self.address, self._tls)
            self._stub = table_pb2_grpc.TableServiceStub(self._channel)
        return self._stub

    async def read_events(
        self, table_id: str, after_version: int, limit: int = 0
    ) -> list[events_pb.EventEnvelope]:
        """The table's stored events after ``after_version`` (at most ``limit``; 0: all), in
        version order, read a page at a time."""

        async def fetch(after: int, count: int) -> Sequence[events_pb.EventEnvelope]:
            request = pb.ReadEventsRequest(table_id=table_id, after_version=after, limit=count)
            response = await self._table().ReadEvents(request, timeout=CALL_TIMEOUT_SECONDS)
            return list(response.events)

        return await read_pages(fetch, after_version, limit, self.page)

    async def timeout(
        self, table_id: str, timer_key: int, game_no: int, round_no: int
    ) -> tuple[TimeoutResult, str]:
        """Ask the table to act on an expired timer; the result and a word on why."""
        request = pb.TimeoutRequest(
            table_id=table_id, timer_key=timer_key, game_no=game_no, round_no=round_no
        )
        return await self._answered(self._table().Timeout(request, timeout=CALL_TIMEOUT_SECONDS))

    async def move_on(
        self, table_id: str, kind: str, timer_key: int, game_no: int, round_no: int
    ) -> tuple[TimeoutResult, str]:
        """Ask a table that waited too long (``kind``) to move on by itself, as the server."""
        request = pb.ExecuteCommandRequest(
            table_id=table_id,
            command_id=f"move-on-{table_id}-{game_no}-{round_no}-{kind}-{timer_key}",
            actor=gpb.Actor(player_id="server", seat=-1),
            command=gpb.Command(
                move_on=gpb.MoveOn(
                    kind=kind, game_no=game_no, round_no=round_no, timer_key=timer_key
                )
            ),
        )
        return await self._answered(
            self._table().ExecuteCommand(request, timeout=CALL_TIMEOUT_SECONDS)
        )

    @staticmethod
    async def _answered(call: Awaitable[object]) -> tuple[TimeoutResult, str]:
        """How the table answered a call made for the timer."""
        try:
            await call
        except grpc.aio.AioRpcError as error:
            code = error.code()
            detail = f"{code.name}: {error.details()}"
            if code in MOVED_ON:
                return TimeoutResult.STALE, detail
            if code == grpc.StatusCode.NOT_FOUND:
                return TimeoutResult.GONE, detail
            if code in REFUSED:
                return TimeoutResult.REFUSED, detail
            return TimeoutResult.RETRY, detail
        return TimeoutResult.ACTED, "OK"

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
            self._stub = None
