"""A small typed client of the public gateway, and a bot that plays a seat through it.

Every call is a coroutine: run them inside ``asyncio.run``. ``address`` is where
the gateway listens (``make run`` prints it; ``president serve gateway`` listens on
``PRESIDENT_GATEWAY_PORT``, 50051 unless set)::

    import asyncio

    from president.client import GatewayClient


    async def main(address: str) -> None:
        async with GatewayClient.connect(address) as client:
            created = await client.create_table(preset="house", display_name="Ada")
            await client.start()
            async for change in client.watch():
                print(change.version, change.view.phase)


    asyncio.run(main("127.0.0.1:50051"))

A client carries an identity (``create_guest``, ``register``, ``log_in``; a
guest is created by itself when ``create_table``, ``join`` or ``spectate``
finds none) and sends its access token with every call, refreshing it before
it expires. Refusals
raise :class:`GatewayError` with the status code, the ErrorInfo reason (the
stable code, such as ``TOO_LOW``) and the sentence for a person.

:func:`play_seat` is the bot client used by ``president run``, the
end-to-end tests and the load benchmark: it watches its seat's stream and
answers with one of the view's legal actions.

- :mod:`.accounts`: who the client is (guest, log in, refresh, log out).
- :mod:`.quick_play`: ``quick_play``, a seat at the best open public table of a preset.
- :mod:`.ratings`: ratings, leaderboards, history and head-to-head.
- :mod:`.door`: :func:`watch_at_door`, a table watched at an audience replica's
  spectators' HTTP door (Connect), for a crowd. It needs ``connectrpc`` (the
  ``president-client[door]`` extra), so it is imported on first use.
- :mod:`.errors`: :class:`GatewayError`, and which refusals a client resends.
- :mod:`.gateway`: :class:`GatewayClient` (the calls) and :class:`Session` (one stream).
- :mod:`.seat_bot`: :func:`play_seat`, a seat played from its view's legal actions.
- :mod:`.receipts`: :class:`Receipts`, the chain hashes of every change the client
  received (``client.receipts``), exported to a file for ``president audit verify --receipts``.
"""

from typing import Any

from president.client.errors import GatewayError
from president.client.gateway import GatewayClient, Session, channel
from president.client.receipts import Receipt, Receipts
from president.client.seat_bot import SeatActions, SeatLog, act, choose, connected, play_seat

__all__ = [
    "GatewayClient",
    "GatewayError",
    "Receipt",
    "Receipts",
    "SeatActions",
    "SeatLog",
    "Session",
    "act",
    "channel",
    "choose",
    "connected",
    "play_seat",
    "watch_at_door",
]


def __getattr__(name: str) -> Any:
    """:func:`watch_at_door`, imported on first use (it needs connectrpc, an extra)."""
    if name == "watch_at_door":
        from president.client.door import watch_at_door

        return watch_at_door
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
