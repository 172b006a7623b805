"""The edge's composition root: settings in, the ASGI application and its channel out."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from connectrpc.compat import google_protobuf_codecs
from starlette.types import ASGIApp

from president.servicekit.channels import gateway_channel
from president.servicekit.config.web import WebSettings
from president.services.web.app import web_application
from president.services.web.forward import GatewayForwarder, connect_application


@dataclass
class Edge:
    """The application to serve, its forwarder (to drain) and the gateway channel."""

    app: ASGIApp
    forwarder: GatewayForwarder
    channel: grpc.aio.Channel


def build(settings: WebSettings) -> Edge:
    """One channel to the gateway, the forwarding endpoints, the site around them.

    Call it on the event loop that will serve (grpc.aio binds a channel to it).
    """
    channel = gateway_channel(settings.gateway, settings.shared.tls)
    forwarder = GatewayForwarder(channel, settings.shared.edge_secret)
    api = connect_application(forwarder, settings.max_body_bytes, google_protobuf_codecs())
    app = web_application(
        api,
        forwarder,
        channel,
        settings.static_dir,
        settings.allowed_origins,
        settings.tls,
        settings.audience_url,
    )
    return Edge(app=app, forwarder=forwarder, channel=channel)
