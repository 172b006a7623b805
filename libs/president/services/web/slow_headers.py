"""A request's headers arrive within a bound, or the edge answers 408 and closes:
:func:`header_deadline`.

uvicorn's HTTP/1.1 protocol (h11) waits for a request's headers as long as the
client likes: one that opens many connections and dribbles a byte now and
then holds them all. Each connection's headers (the first request's from the
moment it connects, a later one's from its first byte) must be complete
within the deadline; else the edge answers ``408 Request Timeout`` and closes
the connection. The body is the application's to bound (its message limit).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

TOO_SLOW = b"the request's headers took too long to arrive"


class HeaderDeadline(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's headers."""

    seconds: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._headers_due: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._headers_due is None and self.conn.their_state is h11.IDLE:
            self._arm()  # a later request on a kept-alive connection begins
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()  # its headers are in

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._headers_due = self.loop.call_later(self.seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None

    def _too_slow(self) -> None:
        self._headers_due = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        # No request was read, so h11 has no response to send: the bytes are written out.
        self.transport.write(
            b"HTTP/1.1 408 Request Timeout\r\n"
            b"content-type: text/plain; charset=utf-8\r\n"
            b"connection: close\r\n"
            b"content-length: " + str(len(TOO_SLOW)).encode() + b"\r\n\r\n" + TOO_SLOW
        )
        self.transport.close()


def header_deadline(seconds: float) -> type[HeaderDeadline]:
    """The protocol class for uvicorn (``Config(http=...)``) with ``seconds`` as its bound."""
    return type("HeaderDeadline", (HeaderDeadline,), {"seconds": seconds})
