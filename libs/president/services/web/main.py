"""``python -m president.services.web.main``: run the web edge (uvicorn, HTTP/1.1).

JSON logs, metrics on ``PRESIDENT_METRICS_PORT`` as every service, TLS when
a certificate and key are configured, and a graceful drain on SIGTERM: no
new connections, the calls and streams under way get the grace period.
"""

from __future__ import annotations

import asyncio
import logging

import uvicorn

from president.servicekit.logs import configure
from president.servicekit.metrics import serve_metrics
from president.services.web.bootstrap import build
from president.services.web.settings import WebSettings


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
        loop="none",
    )
    server = uvicorn.Server(config)
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
        log.info("draining done, closing the gateway channel")
        await edge.channel.close()
        log.info("stopped")


def main() -> None:
    settings = WebSettings()
    try:
        import uvloop
    except ImportError:  # pragma: no cover - Windows
        asyncio.run(run(settings))
    else:
        uvloop.run(run(settings))


if __name__ == "__main__":
    main()
