"""Which web pages may call the API: the edge's own origin and the configured ones, no others.

A browser names the page's origin in the ``Origin`` header of every
cross-origin request and of every POST. A request whose origin is neither
the edge's own nor configured is refused here, 403 with a Connect error
(``permission_denied``, reason ``ORIGIN_NOT_ALLOWED``), before anything
reaches the gateway, so it changes nothing. The configured origins get CORS
answers (Starlette's ``CORSMiddleware``) for the headers Connect and
gRPC-Web use. A request without ``Origin`` (curl, a native tool) is not a
page, and passes to the token checks like a native call.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from president.services.web.refusals import connect_error_body

ORIGIN_NOT_ALLOWED = "ORIGIN_NOT_ALLOWED"
#: The request headers of Connect, gRPC-Web and the bearer token.
ALLOWED_HEADERS = (
    "authorization",
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
)
#: What a page's script may read of an answer: gRPC-Web's status lives in these.
EXPOSED_HEADERS = ("grpc-status", "grpc-message", "grpc-status-details-bin")


def _same_host(origin: str, scope: Scope) -> bool:
    """Whether the page comes from the host it called (the edge's own pages).

    The host alone is compared, not the scheme: behind a proxy that ends TLS
    the page is https while the edge hears http.
    """
    host = next((value for key, value in scope.get("headers", ()) if key == b"host"), b"")
    return bool(host) and origin.partition("://")[2] == host.decode("latin-1")


class OriginGuard:
    """Refuses pages of other origins; lets the configured ones through with CORS answers."""

    def __init__(self, app: ASGIApp, allowed: Sequence[str]) -> None:
        self._allowed = frozenset(allowed)
        self._app: ASGIApp = CORSMiddleware(
            app,
            allow_origins=list(allowed),
            allow_methods=["GET", "POST"],
            allow_headers=list(ALLOWED_HEADERS),
            expose_headers=list(EXPOSED_HEADERS),
            max_age=600,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        origin = next(
            (value.decode("latin-1") for key, value in scope["headers"] if key == b"origin"), None
        )
        if origin is None or origin in self._allowed or _same_host(origin, scope):
            await self._app(scope, receive, send)
            return
        body = connect_error_body(
            "permission_denied", f"pages from {origin} may not call this server", ORIGIN_NOT_ALLOWED
        )
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
