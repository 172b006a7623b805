"""The Session stream: a seat's watch stream and its commands on one bidirectional call.

The first request is a ``WatchRequest``: from then on the changes come
exactly as :meth:`Gateway.watch` streams them. Every later request is one of
the seat's commands (play, pass, return cards, host action); each runs as its
call would (same checks, same rights, same command-id scoping) and is
answered on the stream by a ``CommandResult`` carrying its command id, the
table's version after it, or its refusal. Commands run one after the other,
in the order sent; the changes keep flowing meanwhile.

What is ready together goes in one message: the changes of one commit, and a
command's result with the changes it made. A message costs the gateway and
the client far more than its size, so that is about half as many messages.

The commands act at the session's table (the watch request's
``table_id``): a command naming another table is refused WRONG_TABLE. Each
command re-checks the identity that opened the stream: an expired or
revoked one is refused (TOKEN_EXPIRED, SESSION_REVOKED), and the entrypoint
then ends the stream (:mod:`president.services.gateway.identity.guard`).

When the client half-closes (it sends no more), the stream ends once the
watch's snapshot and every command it sent are answered: a client that is done
gets its status, not a watch that goes on.

A refused command ends nothing else: the refusal travels in its result. The
stream itself fails, with the status Watch would have, when watching fails
(an unknown table, a version ahead, a stream fallen behind), and when its
identity ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import structlog

from president.gateway.v1 import gateway_pb2 as pb
from president.rules.errors import Rejected
from president.rules.options import OptionError
from president.servicekit.errors import Code, ServiceError, denied, to_refusal
from president.servicekit.identity import Identity
from president.servicekit.metrics import observe_call
from president.services.gateway.calls import checks
from president.services.gateway.calls.app import Gateway
from president.services.gateway.calls.refused import Refused
from president.services.gateway.identity.guard import checked_get

DOMAIN_ERRORS = (ServiceError, Rejected, OptionError, Refused)
#: A refusal as the client receives it (the entrypoint's mapping).
RefusalOf = Callable[[Exception], ServiceError]
#: Responses waiting for the client: a slow reader holds back its own stream,
#: and its watcher then reads the store instead of growing a queue.
OUTBOX = 64
#: A message takes what is ready up to about this size; the rest goes next.
MESSAGE_BYTES = 1 << 20

Command = Callable[[Gateway, Identity, Any], Awaitable[Any]]
COMMANDS: dict[str, Command] = {
    "play": Gateway.play,
    "pass": Gateway.pass_,
    "return_cards": Gateway.return_cards,
    "host_action": Gateway.host_action,
}
_log: Any = structlog.get_logger(service="gateway")


def internal(what: str = "call") -> ServiceError:
    """An unexpected failure, said plainly (the details go to the log)."""
    return ServiceError(Code.INTERNAL, "INTERNAL", f"the gateway failed on this {what}; try again")


async def session(
    gateway: Gateway,
    identity: Identity,
    first: pb.SessionRequest | None,
    requests: AsyncIterator[pb.SessionRequest],
    refusal_of: RefusalOf,
    check: Callable[[], None] = lambda: None,
    admit: Callable[[], None] = lambda: None,
) -> AsyncIterator[bytes]:
    """The responses of one Session (``first`` is its first request, already read):
    changes and command results, serialized, what is ready together in one message.

    Changes come serialized already (built once per seat and change, see
    ``Entry.session_response``); the server passes bytes through as they are.
    A refused command's result carries ``refusal_of`` its error; ``check``
    raises if the identity ended (expired, revoked): it runs before each
    command, before each message and every second while none is ready, and
    its refusal ends the stream. ``admit`` counts each command against the rate
    limits: its refusal (RATE_LIMITED) is that command's result.
    """
    if first is None:
        return
    if first.WhichOneof("request") != "watch":
        raise checks.invalid(
            "SESSION_NOT_STARTED",
            "a session starts with a watch request saying where the changes begin",
        )
    out: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue(OUTBOX)

    snapshot_sent = asyncio.Event()  # the watch's first answer is queued (or it failed)

    async def changes() -> None:
        try:
            async for change in gateway.watch_session(identity, first.watch):
                await out.put(change)
                snapshot_sent.set()
        except Exception as error:  # watching failed: the stream fails with it
            await out.put(error)
        else:
            await out.put(None)
        finally:
            snapshot_sent.set()

    async def commands() -> None:
        with contextlib.suppress(grpc.RpcError, asyncio.CancelledError):
            try:
                async for request in requests:
                    result = await answer(
                        gateway, identity, request, refusal_of, first.watch.table_id, check, admit
                    )
                    await out.put(pb.SessionResponse(results=[result]).SerializeToString())
            except Exception as error:  # reading failed (a malformed message): the stream
                await out.put(error)  # ends with its refusal, raised where the call waits
                return
            # The client half-closed: once the watch's snapshot and every command are
            # answered, the stream ends.
            await snapshot_sent.wait()
            await out.put(None)

    tasks = [
        asyncio.create_task(changes(), name="session-changes"),
        asyncio.create_task(commands(), name="session-commands"),
    ]
    try:
        while (item := await checked_get(out, check)) is not None:
            ready: list[bytes] = []
            size = 0
            while isinstance(item, bytes):
                ready.append(item)
                size += len(item)
                if out.empty() or size >= MESSAGE_BYTES:
                    break
                item = out.get_nowait()
            if ready:
                yield b"".join(ready)  # one SessionResponse: serialized messages concatenate
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def answer(
    gateway: Gateway,
    identity: Identity,
    request: pb.SessionRequest,
    refusal_of: RefusalOf,
    table_id: str = "",
    check: Callable[[], None] = lambda: None,
    admit: Callable[[], None] = lambda: None,
) -> pb.CommandResult:
    """Run one command of a session (at ``table_id``) as its call would; its result,
    refusals included."""
    kind = request.WhichOneof("request") or ""
    run = COMMANDS.get(kind)
    command = getattr(request, kind) if run is not None else None
    result = pb.CommandResult(command_id=command.command_id if command is not None else "")
    started = time.perf_counter()
    try:
        if run is None or command is None:
            raise checks.invalid(
                "NOT_A_SESSION_COMMAND",
                "after the first watch request, send a play, pass, return_cards or host_action"
                if kind
                else "the request holds no command",
            )
        check()
        admit()
        if command.table_id and command.table_id != table_id:
            raise denied(
                "WRONG_TABLE",
                f"this session watches table {table_id}: open a session of "
                f"{command.table_id} to act there",
            )
        command.table_id = table_id
        result.version = (await run(gateway, identity, command)).version
        code = "OK"
    except DOMAIN_ERRORS as error:
        refusal = refusal_of(error)
        result.refused.CopyFrom(to_refusal(refusal))
        code = refusal.status.name
    except Exception as error:
        _log.exception("session command failed", error=repr(error))
        result.refused.CopyFrom(to_refusal(internal("command")))
        code = "INTERNAL"
    observe_call("gateway", f"Session/{kind or 'empty'}", code, time.perf_counter() - started)
    return result
