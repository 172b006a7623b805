"""The web edge on a real stack, and the Connect and gRPC-Web wire as a browser writes it.

``web_stack`` starts the five services, an audience replica and the web
edge (SQLite, the machine's NATS) with the repository's static folder and one allowed foreign
origin. The helpers frame messages as the protocols say (Connect's enveloped
streams, gRPC-Web's data and trailer frames) so tests speak them with a plain
HTTP client (httpx), as a browser's fetch does.
"""

from __future__ import annotations

import base64
import json
import struct
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.rpc import error_details_pb2

from president.servicekit.launcher import SERVICES, Stack
from tests.support.servers import isolated_env, sqlite_stack_in

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "web" / "public"
ALLOWED_ORIGIN = "http://club.example"
SERVICE_PATH = "/president.gateway.v1.GatewayService"

#: How long a request's headers may take at this stack's edge (short, for the slow-header
#: test; no other test dribbles its headers).
HEADER_SECONDS = 2.0
#: How long a host may be away before the role passes on, at this stack.
HOST_AWAY_SECONDS = 2.0
END_STREAM = 0x02
GRPC_WEB_TRAILER = 0x80


@pytest.fixture(scope="module")
def web_stack(tmp_path_factory: pytest.TempPathFactory, nats_url: str) -> Iterator[Stack]:
    """The five services, an audience replica (the pages that hold no seat watch at its
    spectators' door) and the web edge, on SQLite files and NATS."""
    workdir = tmp_path_factory.mktemp("webstack")
    env = {
        **isolated_env(),
        "PRESIDENT_WEB_STATIC_DIR": str(STATIC),
        "PRESIDENT_WEB_ALLOWED_ORIGINS": ALLOWED_ORIGIN,
        "PRESIDENT_WEB_HEADER_SECONDS": str(HEADER_SECONDS),
        # A host who closes the page passes the role on soon (the club test waits for it).
        "PRESIDENT_HOST_AWAY_SECONDS": str(HOST_AWAY_SECONDS),
    }
    with sqlite_stack_in(workdir, nats_url, env, (*SERVICES, "web"), audience_replicas=1) as stack:
        yield stack


def base_url(stack: Stack) -> str:
    return f"http://{stack.address('web')}"


def envelope(payload: bytes, flags: int = 0) -> bytes:
    """One enveloped message: a flags byte, a big-endian uint32 length, the bytes."""
    return struct.pack(">BI", flags, len(payload)) + payload


def envelopes(body: bytes) -> list[tuple[int, bytes]]:
    """Every (flags, payload) of an enveloped body."""
    out = []
    offset = 0
    while offset < len(body):
        flags, length = struct.unpack_from(">BI", body, offset)
        out.append((flags, body[offset + 5 : offset + 5 + length]))
        offset += 5 + length
    return out


def error_reason(error: dict[str, Any]) -> str:
    """The ErrorInfo reason of a Connect JSON error."""
    for detail in error.get("details", []):
        if detail["type"] == "google.rpc.ErrorInfo":
            raw = detail["value"]
            info = error_details_pb2.ErrorInfo.FromString(
                base64.b64decode(raw + "=" * (-len(raw) % 4))
            )
            return info.reason
    return ""


def end_of_stream_error(payload: bytes) -> dict[str, Any]:
    """The error of a Connect stream's end message (empty when the stream ended well)."""
    end: dict[str, Any] = json.loads(payload or b"{}")
    error: dict[str, Any] = end.get("error", {})
    return error


class EdgeGuest:
    """A guest calling the edge in Connect JSON from one address (named in
    X-Forwarded-For, which the edge believes from its trusted proxy), with a table of its
    own once seated."""

    def __init__(self, http: httpx.AsyncClient, address: str) -> None:
        self.http = http
        self.address = address
        self.token = ""
        self.table_id = ""

    def headers(self, content_type: str = "application/json") -> dict[str, str]:
        out = {"content-type": content_type, "x-forwarded-for": self.address}
        return {**out, "authorization": f"Bearer {self.token}"} if self.token else out

    async def call(self, method: str, body: dict[str, Any]) -> httpx.Response:
        return await self.http.post(f"{SERVICE_PATH}/{method}", json=body, headers=self.headers())

    async def sit_down(self) -> None:
        """Become a guest and open a classic table of one's own."""
        created = _answered(await self.call("CreateGuest", {"displayName": "Flood"}))
        self.token = created.json()["credentials"]["accessToken"]
        table = _answered(
            await self.call(
                "CreateTable",
                {
                    "options": {"preset": "classic"},
                    "displayName": "F",
                    "commandId": uuid.uuid4().hex,
                },
            )
        )
        self.table_id = table.json()["tableId"]


def _answered(response: httpx.Response) -> httpx.Response:
    """``response`` if it is a 200; else an HTTPStatusError that quotes its body."""
    if response.status_code != 200:
        raise httpx.HTTPStatusError(
            f"HTTP {response.status_code}: {response.text}",
            request=response.request,
            response=response,
        )
    return response
