"""Quick play in the Python client: a seat at the best open public table of a preset.

:class:`QuickPlayCalls` is a part of :class:`~president.client.gateway.GatewayClient`:
``quick_play`` asks the gateway to choose (``QuickPlay``: the open public table of
the preset with the fewest free seats, or a new public table with the caller as
its host), and the client then acts at the table it was given.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from president.gateway.v1 import gateway_pb2 as pb


class QuickPlayCalls:
    """Play now: the server picks the table."""

    #: The table the client acts at, and its seat there (the gateway client's).
    table_id: str
    seat: int | None

    async def _unary(self, method: str, request: Message, timeout: float = 30.0) -> Any:
        raise NotImplementedError  # GatewayClient's

    async def _identity(self, display_name: str) -> None:
        raise NotImplementedError  # AccountCalls'

    async def quick_play(self, preset: str, display_name: str = "You") -> pb.QuickPlayResponse:
        """Sit at the best open public table of ``preset``, or open one as its host (a guest
        is created if need be); the client then acts there. The answer's ``created`` says
        whether the table was opened for this client (which is then its host)."""
        await self._identity(display_name)
        seated: pb.QuickPlayResponse = await self._unary(
            "QuickPlay", pb.QuickPlayRequest(preset=preset, display_name=display_name)
        )
        self.table_id, self.seat = seated.table_id, seated.seat
        return seated
