"""Run one service: grpc.aio with health and reflection, metrics, JSON logs, graceful drain.

Every service's ``main`` builds a :class:`Service` and calls :func:`run`.
On SIGTERM (or Ctrl-C) the health service turns NOT_SERVING, the server
stops accepting calls and finishes those under way for up to the grace
period, background tasks are cancelled and the shutdown hooks run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from president.servicekit.config import KEEPALIVE, Keepalive, Settings
from president.servicekit.logs import configure
from president.servicekit.malformed import MalformedRequests
from president.servicekit.metrics import MetricsInterceptor, serve_metrics
from president.servicekit.reflection import enable_reflection

MAX_MESSAGE_BYTES = 256 * 1024

Hook = Callable[[], Awaitable[None]]


@dataclass
class Service:
    """What a service process runs."""

    name: str
    port: int
    #: Adds the servicers to the server; returns their full service names.
    register: Callable[[grpc.aio.Server], Sequence[str]]
    #: Coroutines that run beside the server (relay, consumers, schedulers).
    background: list[Callable[[], Coroutine[Any, Any, None]]] = field(default_factory=list)
    #: Run after the server stopped.
    on_stop: list[Hook] = field(default_factory=list)
    #: This service's own interceptors, after the metrics one every service has.
    interceptors: Sequence[grpc.aio.ServerInterceptor] = ()
    #: The door clients outside reach (the gateway): TLS of its own, never mutual TLS.
    public: bool = False
    #: This service's own server options (channel arguments), after the shared ones.
    options: Sequence[tuple[str, Any]] = ()


def server_options(keepalive: Keepalive = KEEPALIVE) -> list[tuple[str, Any]]:
    """Every service's server options: message sizes, and the pings its clients send."""
    return [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", 16 * 1024 * 1024),
        ("grpc.so_reuseport", 0),
        *keepalive.server_options(),
    ]


class ServiceSettings(Protocol):
    """A service's settings: its own, and those every service reads (``common``)."""

    @property
    def common(self) -> Settings: ...


S = TypeVar("S", bound=ServiceSettings)


def serve(build: Callable[[S], Service], load: Callable[[], S]) -> None:
    """A service process's ``main``: its settings read from the environment (``load``, the
    one read), the service built with them, then :func:`run`.

    On uvloop where it is installed (Linux and macOS): with the services'
    calls on streams, the event loop's own overhead is a good part of their
    CPU, and uvloop's is smaller (in alternating end-to-end runs, about 6%
    more plays/s; the machine's noise was larger than that).
    """
    settings = load()
    common = settings.common
    if common.nice > 0:
        os.nice(common.nice)  # CPU left to the processes that must go first
    try:
        import uvloop
    except ImportError:  # pragma: no cover - Windows
        asyncio.run(run(build(settings), common))
    else:
        uvloop.run(run(build(settings), common))


async def run(service: Service, settings: Settings) -> None:
    """Serve until SIGTERM or SIGINT, then drain."""
    log = configure(service.name, settings.log_level)
    server = grpc.aio.server(
        interceptors=[MetricsInterceptor(service.name), MalformedRequests(), *service.interceptors],
        # A service's own option replaces the shared one of the same name (gRPC reads the first).
        options=list({**dict(server_options(settings.keepalive)), **dict(service.options)}.items()),
    )
    names = list(service.register(server))
    checker = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)
    enable_reflection(server, names)
    address = f"{settings.host}:{service.port}"
    credentials = settings.tls.server_credentials(service.public)
    if credentials is None:
        port = server.add_insecure_port(address)
    else:
        port = server.add_secure_port(address, credentials)
    if port == 0:
        raise SystemExit(f"{service.name}: cannot listen on {address}")
    await server.start()
    metrics_at = (
        serve_metrics(settings.metrics_port, settings.metrics_host)
        if settings.metrics_port >= 0
        else None
    )
    metrics_port = metrics_at[1] if metrics_at is not None else None
    for name in [*names, ""]:
        await checker.set(name, health_pb2.HealthCheckResponse.SERVING)
    tasks = [
        asyncio.create_task(job(), name=f"{service.name}-background") for job in service.background
    ]
    log.info(
        "serving",
        address=f"{settings.host}:{port}",
        tls=credentials is not None,
        metrics_port=metrics_port,
        services=names,
    )

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    failed = asyncio.create_task(_first_failure(tasks))
    waiter = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({failed, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if failed in done and failed.exception() is not None:
        log.error("background task failed", error=repr(failed.exception()))
    log.info("draining", grace_seconds=settings.grace_seconds)
    for name in [*names, ""]:
        await checker.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
    await server.stop(settings.grace_seconds)
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    failed.cancel()
    waiter.cancel()
    for hook in service.on_stop:
        await hook()
    log.info("stopped")


async def _first_failure(tasks: list[asyncio.Task[None]]) -> None:
    """Completes when a background task ends with an error (they should run forever)."""
    if not tasks:
        await asyncio.Event().wait()
    for finished in asyncio.as_completed(tasks):
        await finished
