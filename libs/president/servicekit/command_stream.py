"""Commands to the table service over one long-lived ExecuteCommands stream.

A unary call costs grpc.aio several times what one message on an open
stream does, and a gateway sends a command for nearly every play. So the
gateway keeps one bidirectional stream to the table service open and sends
each command on it with a request id; the table service answers each on the
response stream, in whatever order they finish. Commands sent while the
stream was busy writing go together in one message, as the table service's
answers that finish together do.

A refusal travels as a :class:`~president.game.v1.game_pb2.Refusal`
(:func:`~president.servicekit.errors.to_refusal`) and becomes the same
:class:`ServiceError` the unary call would have raised
(:func:`~president.servicekit.errors.from_refusal`), so the client sees the same
status, reason and sentence either way.

If the stream breaks (the table service restarted), every command waiting on
it fails with UNAVAILABLE and the next command opens a new stream. A command
that was sent on a broken stream is sent once more on the next one: its
command id makes that safe (the table service runs a command id once and
answers a repeat with the first result).

A message holds the commands ready together up to about :data:`BATCH_BYTES`;
a larger command goes alone. The gateway forwards a client's command as it
came (the table service reads its cards), so one command may be as large as
a public request: the table service takes messages of up to
:data:`RECEIVE_BYTES` on this stream, and a client's oversized command is
refused alone instead of breaking the stream for every other command on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from president.servicekit.batching import take_ready
from president.servicekit.errors import Code, ServiceError, from_refusal
from president.servicekit.server import MAX_MESSAGE_BYTES
from president.table.v1 import table_pb2 as pb

#: How long a command waits for its answer, as the unary call's deadline.
ANSWER_SECONDS = 15.0
#: Commands ready together share a message up to about this size.
BATCH_BYTES = 64 * 1024
#: The largest message the table service takes: a batch, or one command as large as a
#: public request (the gateway's limit) with what the gateway adds to it.
RECEIVE_BYTES = MAX_MESSAGE_BYTES + BATCH_BYTES


def batches(ready: list[pb.TaggedCommand]) -> list[list[pb.TaggedCommand]]:
    """``ready`` in messages of at most about :data:`BATCH_BYTES` (a larger command alone)."""
    if len(ready) == 1:
        return [ready]
    out: list[list[pb.TaggedCommand]] = [[]]
    size = 0
    for item in ready:
        length = item.ByteSize()
        if out[-1] and size + length > BATCH_BYTES:
            out.append([])
            size = 0
        out[-1].append(item)
        size += length
    return out


def unavailable() -> ServiceError:
    """The table service cannot be reached (the stream broke or could not open)."""
    return ServiceError(
        Code.UNAVAILABLE,
        "UPSTREAM_UNAVAILABLE",
        "the table service cannot be reached right now: try again shortly",
    )


def _expire(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


class _Broken(Exception):
    """The stream a command was sent on broke before its answer came."""


class _Stream:
    """One open ExecuteCommands call: requests in through a queue, answers to futures."""

    def __init__(self, open_call: Callable[[AsyncIterator[Any]], Any]) -> None:
        self._outbox: asyncio.Queue[pb.TaggedCommand | None] = asyncio.Queue()
        self._waiting: dict[int, asyncio.Future[pb.ExecuteCommandResponse]] = {}
        self._ids = itertools.count(1)
        self.broken = False
        self._call = open_call(self._requests())
        self._reader = asyncio.create_task(self._read(), name="command-stream-reader")

    async def _requests(self) -> AsyncIterator[pb.ExecuteCommandsRequest]:
        """Messages of the commands queued meanwhile (one or several each)."""
        while (first := await self._outbox.get()) is not None:
            ready, end = take_ready(first, self._outbox)
            for batch in batches(ready):
                yield pb.ExecuteCommandsRequest(commands=batch)
            if end:
                return

    async def _read(self) -> None:
        try:
            async for message in self._call:
                for answer in message.answers:
                    future = self._waiting.pop(answer.request_id, None)
                    if future is None or future.done():
                        continue  # its caller gave up waiting
                    if answer.HasField("refused"):
                        future.set_exception(from_refusal(answer.refused))
                    else:
                        future.set_result(answer.done)
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.CancelledError):
            pass
        finally:
            self.broken = True
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(_Broken())
            self._waiting.clear()

    async def send(self, command: pb.ExecuteCommandRequest) -> pb.ExecuteCommandResponse:
        request_id = next(self._ids)
        future: asyncio.Future[pb.ExecuteCommandResponse] = (
            asyncio.get_running_loop().create_future()
        )
        self._waiting[request_id] = future
        self._outbox.put_nowait(pb.TaggedCommand(request_id=request_id, command=command))
        # A deadline on the future itself: wait_for would add a step between the
        # answer and this caller, on every command.
        deadline = asyncio.get_running_loop().call_later(ANSWER_SECONDS, _expire, future)
        try:
            return await future
        finally:
            deadline.cancel()
            self._waiting.pop(request_id, None)

    async def close(self) -> None:
        self._outbox.put_nowait(None)
        self._call.cancel()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader


class CommandStream:
    """Sends commands to the table service on one shared stream, reopened when it breaks.

    ``open_call`` starts the call from a request iterator, e.g.
    ``lambda requests: stub.ExecuteCommands(requests)``.
    """

    def __init__(self, open_call: Callable[[AsyncIterator[Any]], Any]) -> None:
        self._open_call = open_call
        self._stream: _Stream | None = None

    def _current(self) -> _Stream:
        if self._stream is None or self._stream.broken:
            self._stream = _Stream(self._open_call)
        return self._stream

    async def send(self, command: pb.ExecuteCommandRequest) -> pb.ExecuteCommandResponse:
        """The table service's answer, or the refusal it gave, raised as a ServiceError."""
        for attempt in (1, 2):
            try:
                return await self._current().send(command)
            except _Broken:
                if attempt == 2:
                    raise unavailable() from None
            except TimeoutError:
                raise unavailable() from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def close(self) -> None:
        """Close the stream; commands still waiting fail with UNAVAILABLE."""
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.close()
