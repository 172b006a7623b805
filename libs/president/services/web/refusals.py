"""The edge's own refusals, written as Connect writes errors: a path that is no method.

A Connect error is a JSON body ``{"code", "message", "details"}`` with each
``google.rpc.ErrorInfo`` in ``details``, its ``debug`` readable JSON
(:func:`connect_error_body`; the origin guard's refusal is one too).
:class:`UnknownMethods` answers a POST to a path shaped like a method
(``/<package>.<Service>/<Method>``) that the gateway does not have as Connect does,
``unimplemented``: HTTP 404 with that body, or, to a gRPC-Web caller, status 12 in a
trailers-only answer. Without it such a call
reached the static files, which answer a POST with 405.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

from president.servicekit.connect_errors import error_json

#: The ErrorInfo reason of a call to a method the API does not have.
UNKNOWN_METHOD = "UNKNOWN_METHOD"
#: A method's path: ``/<package>.<Service>/<Method>``.
METHOD_PATH = re.compile(r"^/[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+/[A-Za-z_]\w*$")
UNIMPLEMENTED = 12


def connect_error_body(code: str, message: str, reason: str) -> bytes:
    """A Connect JSON error: ``code`` (Connect's name, e.g. ``permission_denied``), the
    sentence, and an ErrorInfo with ``reason`` (``connect_errors.error_json``)."""
    return json.dumps(error_json(code, message, reason)).encode()


class UnknownMethods:
    """Answers a POST to a method path not in ``methods`` as Connect's ``unimplemented``;
    everything else goes to ``app``."""

    def __init__(self, app: ASGIApp, methods: Iterable[str]) -> None:
        self._app = app
        self._methods = frozenset(methods)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or path in self._methods
            or not METHOD_PATH.match(path)
        ):
            await self._app(scope, receive, send)
            return
        message = f"{path[1:]} is not a method of this API"
        content_type = next(
            (value for key, value in scope["headers"] if key == b"content-type"), b""
        )
        if content_type.startswith(b"application/grpc-web"):
            headers = [
                (b"content-type", content_type.split(b";")[0]),
                (b"grpc-status", str(UNIMPLEMENTED).encode()),
                (b"grpc-message", message.replace(" ", "%20").encode()),
                (b"content-length", b"0"),
            ]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        body = connect_error_body("unimplemented", message, UNKNOWN_METHOD)
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 404, "headers": headers})
        await send({"type": "http.response.body", "body": body})
