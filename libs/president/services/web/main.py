"""``python -m president.services.web.main``: run the web edge (uvicorn, HTTP/1.1).

JSON logs, metrics on ``PRESIDENT_METRICS_PORT`` as every service, TLS when
a certificate and key are configured, and a graceful drain on SIGTERM: no
new connections, open streams end at once with UNAVAILABLE (reconnect and
resume), the calls under way get the grace period.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from types import FrameType

import uvicorn

from president.servicekit.config.web import WebSettings
from president.servicekit.logs import configure
from president.servicekit.metrics import serve_metrics
from president.services.web.bootstrap import build
from president.services.web.slow_headers import header_deadline


class DrainingServer(uvicorn.Server):
    """uvicorn's server, which also ends the open streams when told to stop.

    A signal stops the server as uvicorn's own handler does (a second Ctrl-C
    forces it), and the process then ends as every service does, its
    shutdown run and exit code 0, rather than by the signal raised again.
    """

    def __init__(self, config: uvicorn.Config, drain: Callable[[], None]) -> None:
        super().__init__(config)
        self._drain = drain
        self._loop = asyncio.get_running_loop()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self._loop.call_soon_threadsafe(self._drain)
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        self.should_exit = True


async def run(settings: WebSettings) -> None:
    """Serve until SIGTERM or SIGINT, then drain and close the gateway channel."""
    shared = settings.shared
    log = configure("web", shared.log_level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).setLevel(logging.WARNING)  # our own JSON lines say it
    edge = build(settings)
    config = uvicorn.Config(
        edge.app,
        host=shared.host,
        port=settings.port,
        ssl_certfile=settings.tls_cert or None,
        ssl_keyfile=settings.tls_key or None,
        timeout_graceful_shutdown=shared.grace_seconds,
        lifespan="off",
        log_config=None,
        access_log=False,
        server_header=False,
        http=header_deadline(settings.header_seconds),
        # X-Forwarded-For only from the proxies the operator names (uvicorn's default
        # believes loopback, so a caller beside the edge could name any address).
        proxy_headers=bool(settings.trusted_proxies),
        forwarded_allow_ips=list(settings.trusted_proxies),
        loop="none",
    )
    server = DrainingServer(config, edge.forwarder.drain)
    metrics_port = serve_metrics(shared.metrics_port) if shared.metrics_port >= 0 else None
    scheme = "https" if settings.tls else "http"
    log.info(
        "serving",
        url=f"{scheme}://{shared.host}:{settings.port}/",
        gateway=settings.gateway,
        metrics_port=metrics_port,
        static_dir=str(settings.static_dir),
        allowed_origins=list(settings.allowed_origins),
    )
    try:
        await server.serve()
    finally:
        log.info("draining done, closing the gateway channels")
        await edge.upstream.close()
        log.info("stopped")


def main() -> None:
    settings = WebSettings.from_env()
    try:
        import uvloop
    except ImportError:  # pragma: no cover - Windows
        asyncio.run(run(settings))
    else:
        uvloop.run(run(settings))


if __name__ == "__main__":
    main()
