"""The audience's HTTP door: ``Watch`` for spectators as a Connect server stream over HTTP/1.1,
each change framed once per table and written straight to every spectator's socket.

Why a door of its own: a gRPC stream write costs the Python gateway 80-130 µs
of CPU (the grpc.aio machinery per message, whatever the bytes), so a replica
woken for a thousand spectators spends 100 ms or more before the last one has
its change. Here a spectator is a socket: a change is enveloped and framed as
an HTTP chunk once per table (its crowd's flush, :mod:`~president.services.gateway.api.
crowds`), and the same bytes are handed
to each spectator's transport in one loop, with no task woken and no
per-stream serialization (about 10 µs each, the kernel's send). The same
protocol and messages as the web edge's ``Watch`` (Connect, ``application/
connect+proto`` or ``application/connect+json``), so any Connect client (the
browser's connect-web, connect-python) reads it; the changes are the
spectators' shared ``WatchResponse`` bytes (:meth:`Entry.watch_response`
with no seat: nobody's cards).

Only an audience replica opens it (``PRESIDENT_AUDIENCE_HTTP_PORT``), fed as
its gRPC ``Watch`` is (NATS, the table service's store reads). A stream
opens as ``Watch`` does: the bearer token, a slot of the caller's streams
(:mod:`president.servicekit.stream_limits`), a snapshot, a resume
from the feed's history or, from long past, the view now marked
``skipped``. Its rights are checked again every second; a refusal ends the
stream with its code, sentence and ``google.rpc.ErrorInfo``. A caller who
holds a seat at the table is refused (``SEAT_HOLDER``): its hand is shown at
the players' gateway only.

Changes that come within
:data:`~president.services.gateway.api.crowds.FLUSH_SECONDS` of the last write go out
together (at most one write per spectator per flush). A spectator whose
unsent bytes pass :data:`BUFFER_BYTES` (a phone on a bad network, a client
that never reads) is skipped, and once its socket drains it is sent the
view now as a ``skipped`` snapshot: its memory is its socket's buffer, and
nobody waits for it. When the replica drains, every stream ends with
UNAVAILABLE ``SERVER_DRAINING``: resume from the last version. With the
gateway's public TLS configured (``PRESIDENT_TLS_CERT``), the door speaks
TLS with the same certificate.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import cast

import h11
import structlog
from prometheus_client import Gauge

from president.hosting.projection import Table
from president.hosting.seat_views import seat_of
from president.servicekit import checks
from president.servicekit.config.gateway import DoorSettings
from president.servicekit.errors import Code, ServiceError
from president.servicekit.identity import Identity
from president.servicekit.peers import Peers
from president.services.gateway.api.connect import (
    CODECS,
    JSON,
    PROTO,
    end_of_stream,
    read_request,
    timed_out,
    timeout_seconds,
)
from president.services.gateway.api.crowds import WIRES, crowd
from president.services.gateway.identity.auth import Verifier, bearer
from president.services.gateway.identity.guard import RECHECK_SECONDS
from president.services.gateway.limits.admission import Admission
from president.services.gateway.streams import watch
from president.services.gateway.streams.entries import Entry
from president.services.gateway.streams.fanout import Broadcast, Policy, start_at
from president.services.gateway.streams.feed import FeedHub, TableFeed, draining
from president.services.gateway.streams.watch import version_ahead

#: The one call served here.
WATCH_PATH = "/president.gateway.v1.GatewayService/Watch"
#: Unsent bytes a spectator may have, in this process and in the kernel's send buffer each,
#: before it is skipped until its socket drains (``PRESIDENT_AUDIENCE_BUFFER_KIB``,
#: :func:`configure`): a kernel's own default buffer holds megabytes, seconds of a table's
#: changes, and a spectator behind by that much should get the view now instead.
BUFFER_BYTES = DoorSettings().buffer_bytes


def configure(settings: DoorSettings) -> None:
    """The door's settings, set once at start (the gateway's bootstrap)."""
    global BUFFER_BYTES  # noqa: PLW0603 - set once, at start
    BUFFER_BYTES = settings.buffer_bytes


#: The largest request body read (a WatchRequest is a few dozen bytes).
MAX_REQUEST_BYTES = 16 * 1024
#: A connection that has not sent its whole request by then is closed.
REQUEST_SECONDS = 10.0
ALLOWED_HEADERS = (
    "authorization, content-type, connect-protocol-version, connect-timeout-ms, "
    "connect-accept-encoding, connect-content-encoding, x-user-agent, x-grpc-web"
)

STREAMS = Gauge("president_gateway_audience_http_streams", "Spectators' HTTP Watch streams open.")
log = structlog.get_logger(service="gateway")


def _seat_holder(seat: int) -> ServiceError:
    return ServiceError(
        Code.FAILED_PRECONDITION,
        "SEAT_HOLDER",
        f"you hold seat {seat} at this table: watch it at the players' gateway, "
        "which shows you your hand (this door shows the table as a spectator sees it)",
    )


# -- one spectator's connection ------------------------------------------------------------
class SpectatorStream(asyncio.Protocol):
    """One HTTP/1.1 connection: its request read with h11, then its Watch stream written."""

    def __init__(self, door: AudienceDoor) -> None:
        self._door = door
        self._http = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_REQUEST_BYTES)
        self._transport: asyncio.Transport | None = None
        self._request: h11.Request | None = None
        self._body = bytearray()
        self._opening: asyncio.Task[None] | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._timeout: asyncio.TimerHandle | None = None
        self._slot: AbstractContextManager[None] | None = None
        self._crowd: Broadcast | None = None
        self._feed: TableFeed | None = None
        self.codec = PROTO
        self.identity: Identity | None = None
        self.peer = ""
        self._socket_peer = ""
        self._cors: list[tuple[str, str]] = []
        #: What its crowd sees of it (a :class:`~president.services.gateway.streams.fanout.
        #: Subscriber`): nobody's seat, its encoding's wire, the view now after a stall.
        self.wire = WIRES[PROTO]
        self.policy = Policy.NEWEST
        self.at: Entry
        self.drained: Callable[[], None] = lambda: None
        self.paused = False
        self.ended = False
        self._headed = False

    # -- asyncio's protocol ------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self._transport.set_write_buffer_limits(high=BUFFER_BYTES)
        connection = transport.get_extra_info("socket")
        if connection is not None:
            with contextlib.suppress(OSError):
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUFFER_BYTES)
        peer = transport.get_extra_info("peername")
        if peer:  # as gRPC names a peer, for the same counting
            host = str(peer[0])
            self._socket_peer = (
                f"ipv6:[{host}]:{peer[1]}" if ":" in host else f"ipv4:{host}:{peer[1]}"
            )
        self._deadline = asyncio.get_running_loop().call_later(REQUEST_SECONDS, self._too_slow)

    def data_received(self, data: bytes) -> None:
        if self._request is not None and self._opening is not None:
            return  # the stream goes one way once opened
        try:
            self._http.receive_data(data)
            while True:
                event = self._http.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    return
                if isinstance(event, h11.Request):
                    self._request = event
                elif isinstance(event, h11.Data):
                    self._body += event.data
                    if len(self._body) > MAX_REQUEST_BYTES:
                        self._plain(413, "the request is too large: a WatchRequest is small")
                        return
                elif isinstance(event, h11.EndOfMessage):
                    self._route()
                    return
                elif isinstance(event, h11.ConnectionClosed):
                    return
        except h11.RemoteProtocolError as error:
            self._plain(400, f"that is not an HTTP/1.1 request: {error}")
        except h11.LocalProtocolError:  # an answer h11 will not frame (to HEAD, say): close
            self.ended = True
            if self._transport is not None:
                self._transport.close()

    def eof_received(self) -> bool:
        return True  # a client that half-closes after its request still reads its stream

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        if not self.ended:
            self.drained()

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self._release()
        if self._opening is not None and not self._opening.done():
            self._opening.cancel()

    # -- the request -----------------------------------------------------------------------
    def _route(self) -> None:
        request = self._request
        assert request is not None
        if self._deadline is not None:
            self._deadline.cancel()
        headers = {
            name.decode().lower(): value.decode("latin-1") for name, value in request.headers
        }
        method, path = request.method.decode(), request.target.decode().split("?", 1)[0]
        self.peer = self._door.peers.of(self._socket_peer, list(headers.items()))
        origin = headers.get("origin")
        if origin is not None and not self._door.allows(origin):
            self._plain(403, f"pages of {origin} may not call this server (ORIGIN_NOT_ALLOWED)")
            return
        cors = self._door.cors(origin)
        self._cors = cors
        if request.http_version != b"1.1":
            self._plain(505, "speak HTTP/1.1 to this server: a stream is sent in chunks")
            return
        if method == "OPTIONS":
            self._answer(204, [*cors, ("access-control-max-age", "600")], b"")
            return
        if path == "/healthz" and method in ("GET", "HEAD"):
            self._answer(200, [("content-type", "text/plain")], b"ok")
            return
        if path != WATCH_PATH:
            self._plain(404, f"this door serves {WATCH_PATH} only (spectators' Watch)")
            return
        if method != "POST":
            self._plain(405, "Watch is a POST")
            return
        codec = CODECS.get(headers.get("content-type", "").split(";", 1)[0].strip())
        if codec is None:
            self._plain(415, f"send {PROTO.content_type} or {JSON.content_type}")
            return
        self.codec = codec
        self.wire = WIRES[codec]
        self._head(cors)
        self._opening = asyncio.get_running_loop().create_task(
            self._open(headers, bytes(self._body))
        )

    async def _open(self, headers: dict[str, str], body: bytes) -> None:
        try:
            seconds = timeout_seconds(headers.get("connect-timeout-ms"))
            if seconds is not None and not self.ended:
                self._timeout = asyncio.get_running_loop().call_later(
                    seconds, self.end, timed_out(seconds)
                )
            request = read_request(self.codec, body)
            authorization = headers.get("authorization")
            token = bearer([("authorization", authorization)] if authorization else [])
            self.identity = self._door.verifier.verify(token)
            self._door.admission.opened("Watch", self.peer, self.identity.account_id)
            slot = self._door.admission.stream(self.peer, self.identity.account_id)
            slot.__enter__()
            self._slot = slot
            table_id = checks.table_id(request.table_id)
            feed = await self._door.hub.feed(table_id)
            if request.from_version > feed.version:
                await feed.catch_up()
                if request.from_version > feed.version:
                    raise version_ahead(feed.version, request.from_version)
            seat = seat_of(feed.table.game, self.identity.account_id)
            if seat is not None:
                raise _seat_holder(seat)
            if self.ended:
                return
            self._crowd, self._feed = self._door.crowd(feed), feed
            STREAMS.inc()
            current = feed.current
            assert current is not None
            start = start_at(current, feed.history, request.from_version, watch.REPLAY_LIMIT)
            self._crowd.join(self, start)
        except ServiceError as error:
            self.end(error)
        except Exception as error:  # a defect: the stream ends as INTERNAL, said once in the log
            log.exception("spectator stream failed", error=type(error).__name__)
            self.end(ServiceError(Code.INTERNAL, "INTERNAL", "the server failed"))

    def check_seat(self) -> None:
        """SEAT_HOLDER once the spectator holds a seat at the table (it sat down elsewhere,
        or the replica had not seen its seat when the stream opened): its hand is at the
        players' gateway."""
        identity, feed = self.identity, self._feed
        if feed is None or identity is None or feed.current is None:
            return
        seat = seat_of(feed.current.table.game, identity.account_id)
        if seat is not None:
            raise _seat_holder(seat)

    # -- writing -----------------------------------------------------------------------
    def _head(self, cors: Sequence[tuple[str, str]]) -> None:
        head = h11.Response(
            status_code=200,
            headers=[
                ("content-type", self.codec.content_type),
                ("transfer-encoding", "chunked"),
                ("cache-control", "no-store"),
                ("x-content-type-options", "nosniff"),
                ("connection", "close"),
                *cors,
            ],
        )
        self._send(self._http.send(head) or b"")
        self._headed = True

    @staticmethod
    def seat_for(_table: Table) -> int | None:
        """A spectator sees as nobody."""
        return None

    def offer(self, write: list[bytes]) -> bool:
        """Its crowd's next write, to the socket now; refused while the socket is full."""
        if self.paused or self.ended:
            return False
        self._send(b"".join(write))
        return True

    def end(self, error: Exception | None) -> None:
        """The stream's end (with ``error``'s code, sentence and reason), then the close."""
        if self.ended:
            return
        self.ended = True
        if error is not None and not isinstance(error, ServiceError):
            error = ServiceError(Code.INTERNAL, "INTERNAL", "the server failed")
        if self._headed:
            self._send(end_of_stream(error))
        if self._transport is not None:
            self._transport.close()
        self._release()

    def _answer(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        if self._transport is None or self.ended:
            return
        if self._deadline is not None:
            self._deadline.cancel()
        answer = h11.Response(
            status_code=status,
            headers=[*headers, ("content-length", str(len(body))), ("connection", "close")],
        )
        self._send(self._http.send(answer) or b"")
        if self._request is None or self._request.method != b"HEAD":  # HEAD: the head alone
            self._send(self._http.send(h11.Data(data=body)) or b"")
        self._send(self._http.send(h11.EndOfMessage()) or b"")
        self.ended = True
        self._transport.close()

    def _plain(self, status: int, message: str) -> None:
        """An answer that is not a stream (a bad path, media type, size): a sentence (which an
        allowed page may read)."""
        headers = [("content-type", "text/plain; charset=utf-8"), *self._cors]
        self._answer(status, headers, message.encode())

    def _send(self, data: bytes) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    def _too_slow(self) -> None:
        if not self.ended and (self._request is None or self._opening is None):
            self._plain(408, f"send the whole request within {REQUEST_SECONDS:g} s")

    def _release(self) -> None:
        if self._timeout is not None:
            self._timeout.cancel()
        if self._crowd is not None:
            self._crowd.leave(self)
            self._crowd = None
            STREAMS.dec()
        self._door.forget(self)
        if self._slot is not None:
            slot, self._slot = self._slot, None
            with contextlib.suppress(Exception):
                slot.__exit__(None, None, None)


# -- the door ------------------------------------------------------------------------------
class AudienceDoor:
    """The HTTP listener of an audience replica: its spectators' streams, their crowds, and
    the second-by-second re-check of their rights."""

    def __init__(
        self,
        hub: FeedHub,
        verifier: Verifier,
        admission: Admission,
        allowed_origins: Sequence[str] = (),
        edge_secret: str = "",
    ) -> None:
        self.hub = hub
        self.verifier = verifier
        self.admission = admission
        #: Whose address a stream counts from: its socket's, or a proxy's word for it.
        self.peers = Peers(edge_secret)
        self._origins = frozenset(allowed_origins)
        self._crowds: dict[str, Broadcast] = {}
        self._streams: set[SpectatorStream] = set()
        self._server: asyncio.Server | None = None
        #: The port it listens on, once it does.
        self.port = 0

    def allows(self, origin: str) -> bool:
        return origin in self._origins

    def cors(self, origin: str | None) -> list[tuple[str, str]]:
        """The CORS headers for a page of an allowed ``origin`` (none for native clients)."""
        if origin is None:
            return []
        return [
            ("access-control-allow-origin", origin),
            ("vary", "origin"),
            ("access-control-allow-methods", "POST, OPTIONS"),
            ("access-control-allow-headers", ALLOWED_HEADERS),
            (
                "access-control-expose-headers",
                "grpc-status, grpc-message, connect-content-encoding",
            ),
        ]

    def crowd(self, feed: TableFeed) -> Broadcast:
        """The table's crowd here (a new one for a feed opened again)."""
        found = self._crowds.get(feed.table_id)
        if found is None or found not in feed.crowds or feed.closed:
            found = self._crowds[feed.table_id] = crowd(feed)
        return found

    def _connection(self) -> SpectatorStream:
        stream = SpectatorStream(self)
        self._streams.add(stream)
        return stream

    def forget(self, stream: SpectatorStream) -> None:
        self._streams.discard(stream)

    async def serve(
        self,
        host: str,
        port: int,
        ready: asyncio.Event | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """Listen on ``host:port`` (over TLS with ``tls``) until cancelled; then every stream
        ends (SERVER_DRAINING). ``ready`` is set once it listens."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._connection, host, port, backlog=1024, ssl=tls)
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("spectators' HTTP door open", address=f"{host}:{self.port}", tls=tls is not None)
        if ready is not None:
            ready.set()
        try:
            while True:
                await asyncio.sleep(RECHECK_SECONDS)
                self.recheck()
        finally:
            self._server.close()
            for stream in list(self._streams):
                stream.end(draining())
            self._crowds.clear()

    def recheck(self) -> None:
        """End every stream whose identity expired or was revoked since it opened."""
        for stream in list(self._streams):
            if stream.identity is None or stream.ended:
                continue
            try:
                self.verifier.check(stream.identity)
                stream.check_seat()
            except ServiceError as error:
                stream.end(error)
        for table_id, found in list(self._crowds.items()):
            if not found.watched:
                feed = self.hub.following(table_id)
                if feed is not None:
                    with contextlib.suppress(ValueError):
                        feed.crowds.remove(found)
                del self._crowds[table_id]
