"""Prometheus metrics: gRPC requests by method and code, latency, and the game's counters.

The alert rules and the dashboard of ``deploy/`` read these names (the operations kit,
``docs/operations.md#alerts-and-what-to-do``): renaming one breaks them, and
``tests/deploy/test_operations_kit.py`` says so.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import grpc
from prometheus_client import Counter, Gauge, Histogram, start_http_server

GRPC_REQUESTS = Counter(
    "president_grpc_requests_total",
    "gRPC requests handled, by service, method and status code.",
    ["service", "method", "code"],
)
GRPC_LATENCY = Histogram(
    "president_grpc_request_seconds",
    "gRPC request handling time, by service, method and status code.",
    ["service", "method", "code"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
PLAYS = Counter("president_plays_total", "Accepted plays and passes.", ["kind"])
REJECTIONS = Counter("president_rejections_total", "Refused commands, by error code.", ["code"])
ROUNDS = Counter("president_rounds_total", "Rounds finished.")
TIMEOUTS = Counter(
    "president_timeouts_total", "Timeouts the table service acted on, by kind.", ["kind"]
)
DEADLINES_FIRED = Counter(
    "president_timer_deadlines_fired_total",
    "Deadlines the timer sent to the table service, by kind and what the table said "
    "(acted, stale, gone, refused, retry).",
    ["kind", "result"],
)
ACTIVE_TABLES = Gauge("president_active_tables", "Tables loaded in this process.")
EVENTS_PUBLISHED = Counter("president_events_published_total", "Events the outbox relay published.")
EVENTS_CONSUMED = Counter(
    "president_events_consumed_total", "Events a consumer processed.", ["consumer"]
)
CONSUMER_LAG = Gauge(
    "president_consumer_lag_seconds",
    "How old the newest event a consumer applied was when it applied it: its delay behind "
    "the store.",
    ["consumer"],
)
RELAY_BEHIND = Gauge(
    "president_relay_behind_seconds",
    "Seconds since the outbox relay last had every stored event on NATS (under a second "
    "while it keeps up; it grows while NATS or the store is away).",
)
TIMER_OVERDUE = Gauge(
    "president_timer_overdue_seconds",
    "How far past its deadline the most overdue table of this timer is (0: none): a table "
    "standing still.",
)
LEASES = Counter(
    "president_table_leases_total",
    "Table leases this replica took (taken), took from a holder that did not answer "
    "(taken_over), or found taken by another replica at renewal (lost).",
    ["event"],
)


class ConsumerLag:
    """``president_consumer_lag_seconds`` of one consumer: it notes the time of each event it
    applied (a field set, no work), and the scrape works out the delay of the newest."""

    def __init__(self, consumer: str) -> None:
        self._event_time = ""
        self._applied_at = 0.0
        CONSUMER_LAG.labels(consumer).set_function(self.seconds)

    def applied(self, event_time: str) -> None:
        """An event whose envelope says ``event_time`` (ISO 8601) was applied just now."""
        self._event_time, self._applied_at = event_time, time.time()

    def seconds(self) -> float:
        """How old the newest applied event was when applied (0: none yet, or no time)."""
        event_time, applied_at = self._event_time, self._applied_at
        try:
            written = datetime.fromisoformat(event_time).timestamp()
        except ValueError:
            return 0.0
        return max(0.0, applied_at - written)


def serve_metrics(port: int, host: str = "127.0.0.1") -> tuple[str, int]:
    """Expose /metrics over HTTP on ``host``:``port`` (0: a free port); returns where it
    listens. Loopback unless told otherwise (``PRESIDENT_METRICS_HOST``)."""
    server, _thread = start_http_server(port, addr=host)
    return str(server.server_address[0]), int(server.server_port)


def observe_call(service: str, method: str, code: str, seconds: float) -> None:
    """Count and time one request (or one command on a stream) by method and code."""
    GRPC_REQUESTS.labels(service, method, code).inc()
    GRPC_LATENCY.labels(service, method, code).observe(seconds)


def _code_name(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    code = context.code()
    if code is None:
        return "OK"
    if isinstance(code, grpc.StatusCode):
        return str(code.name)
    return str(code)


class MetricsInterceptor(grpc.aio.ServerInterceptor):
    """Counts and times every request by method and final status code."""

    def __init__(self, service: str) -> None:
        self._service = service

    async def intercept_service(  # handlers are untyped in grpc's stubs
        self, continuation: Any, handler_call_details: Any
    ) -> Any:
        handler: Any = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method.rsplit("/", 1)[-1]
        service = self._service
        if handler.unary_unary is not None:
            inner: Any = handler.unary_unary

            async def unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                started = time.perf_counter()
                code = "UNKNOWN"
                try:
                    response = await inner(request, context)
                    code = _code_name(context)
                    return response
                except BaseException:
                    code = _code_name(context)
                    code = "UNKNOWN" if code == "OK" else code
                    raise
                finally:
                    observe_call(service, method, code, time.perf_counter() - started)

            return grpc.unary_unary_rpc_method_handler(
                unary,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        streaming: Any = handler.unary_stream or handler.stream_stream
        if streaming is None:
            return handler

        async def stream(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            started = time.perf_counter()
            code = "UNKNOWN"
            try:
                async for item in streaming(request, context):
                    yield item
                code = _code_name(context)
            except BaseException:
                code = _code_name(context)
                code = "CANCELLED" if code == "OK" else code
                raise
            finally:
                observe_call(service, method, code, time.perf_counter() - started)

        make = (
            grpc.unary_stream_rpc_method_handler
            if handler.unary_stream is not None
            else grpc.stream_stream_rpc_method_handler
        )
        return make(
            stream,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
