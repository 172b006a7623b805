"""The edge's one ASGI application: probes, the Connect API, the static site, and the guards.

``/config.json`` tells the page where spectators watch (the audience
replicas' HTTP door, ``PRESIDENT_WEB_AUDIENCE_URL``, or nowhere else);
``/healthz`` answers while the process runs; ``/readyz`` while the gateway
answers its health check and the edge is not draining (a load balancer sends
browsers only to an edge that can reach the game). The API lives at
``/president.gateway.v1.GatewayService/<Method>``; a POST to any other
method's path is Connect's ``unimplemented``
(:class:`~president.services.web.refusals.UnknownMethods`); every other path
is a file of the static folder. Every answer carries the
security headers; pages of other origins are refused before routing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from president.services.web.forward import SERVICE, GatewayApplication, GatewayForwarder
from president.services.web.headers import SecurityHeaders
from president.services.web.malformed import NameTheEncoding
from president.services.web.origins import OriginGuard
from president.services.web.refusals import UnknownMethods

READY_TIMEOUT_SECONDS = 1.0


def web_application(
    api: GatewayApplication,
    forwarder: GatewayForwarder,
    channel: grpc.aio.Channel,
    static_dir: Path,
    allowed_origins: tuple[str, ...],
    tls: bool,
    audience_url: str = "",
) -> ASGIApp:
    """The whole edge as one ASGI application."""
    health: Any = health_pb2_grpc.HealthStub(channel)  # untyped in the stubs

    async def healthz(_: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(_: Request) -> Response:
        if forwarder.draining:
            return PlainTextResponse("draining", status_code=503)
        try:
            answer = await health.Check(
                health_pb2.HealthCheckRequest(service=""), timeout=READY_TIMEOUT_SECONDS
            )
        except grpc.aio.AioRpcError:
            return PlainTextResponse("the gateway is not reachable", status_code=503)
        if answer.status != health_pb2.HealthCheckResponse.SERVING:
            return PlainTextResponse("the gateway is not serving", status_code=503)
        return PlainTextResponse("ok")

    async def config(_: Request) -> Response:
        """What the page needs to know of the deployment: where spectators watch."""
        return JSONResponse({"audienceUrl": audience_url}, headers={"cache-control": "no-store"})

    routes: list[BaseRoute] = [
        Route("/config.json", config),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Mount(api.path, app=NameTheEncoding(api)),
    ]
    if static_dir.is_dir():
        routes.append(Mount("/", app=StaticFiles(directory=static_dir, html=True)))
    site = UnknownMethods(
        Starlette(routes=routes), (f"{api.path}/{method.name}" for method in SERVICE.methods)
    )
    connect = (audience_url,) if audience_url else ()
    return SecurityHeaders(OriginGuard(site, allowed_origins), tls, connect)
