"""The edge's composition root: settings in, the ASGI application and its channels out."""

from __future__ import annotations

from dataclasses import dataclass

from connectrpc.compat import google_protobuf_codecs
from starlette.types import ASGIApp

from president.servicekit.config.web import WebSettings
from president.services.web.app import web_application
from president.services.web.forward import GatewayForwarder, connect_application
from president.services.web.upstream import Upstream


@dataclass
class Edge:
    """The application to serve, its forwarder (to drain) and the channels to the gateway."""

    app: ASGIApp
    forwarder: GatewayForwarder
    upstream: Upstream


def build(settings: WebSettings) -> Edge:
    """The channels to the gateway, the forwarding endpoints, the site around them.

    Call it on the event loop that will serve (grpc.aio binds a channel to it).
    """
    upstream = Upstream.configured(settings)
    forwarder = GatewayForwarder(upstream, settings.shared.edge_secret)
    api = connect_application(forwarder, settings.max_body_bytes, google_protobuf_codecs())
    app = web_application(
        api,
        forwarder,
        upstream.unary,
        settings.static_dir,
        settings.allowed_origins,
        settings.tls,
        settings.audience_url,
    )
    return Edge(app=app, forwarder=forwarder, upstream=upstream)
