"""The security headers a game site sends on every answer.

A Content-Security-Policy that runs only the site's own script files (no
inline script, no ``eval``), calls only the site (and the spectators' door
when one is set) and lets no other site frame the page, no MIME
sniffing, no referrer sent elsewhere, and HSTS when the edge speaks TLS.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


def content_security_policy(connect: tuple[str, ...] = ()) -> str:
    """The policy: the site's own files only; its API at the site and at ``connect`` (the
    spectators' door, when the page watches there)."""
    sources = " ".join(("'self'", *connect))
    return (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"connect-src {sources}; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    )


CONTENT_SECURITY_POLICY = content_security_policy()
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
)
HSTS = (b"strict-transport-security", b"max-age=31536000")


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` (and HSTS over TLS) to every HTTP answer."""

    def __init__(self, app: ASGIApp, tls: bool, connect: tuple[str, ...] = ()) -> None:
        self._app = app
        policy = (b"content-security-policy", content_security_policy(connect).encode())
        self._headers = (policy, *SECURITY_HEADERS, *((HSTS,) if tls else ()))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *self._headers]
            await send(message)

        await self._app(scope, receive, with_headers)
