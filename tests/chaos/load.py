"""The chaos runs' load: tables of bot clients playing through gateways, every OK noted.

Shared by ``make chaos`` (one machine) and ``make cluster-chaos`` (hosts as
network namespaces). Each table has a host and a guest client (seat bots that
play game after game) and two server bots; the host notes when it saw each
change, and each client the command ids the gateway answered OK.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from president.client import GatewayClient, GatewayError, SeatLog, play_seat


class RecordingClient(GatewayClient):
    """A gateway client that notes the command id of every command answered OK."""

    accepted: list[str]

    def note(self, command_id: str) -> None:
        if not hasattr(self, "accepted"):
            self.accepted = []
        self.accepted.append(command_id)

    async def play(
        self, cards: Sequence[str], trick_version: int | None = None, command_id: str = ""
    ) -> int:
        version = await super().play(cards, trick_version, command_id)
        self.note(command_id)
        return version

    async def pass_(self, trick_version: int | None = None, command_id: str = "") -> int:
        version = await super().pass_(trick_version, command_id)
        self.note(command_id)
        return version

    async def return_cards(self, cards: Sequence[str], command_id: str = "") -> int:
        version = await super().return_cards(cards, command_id)
        self.note(command_id)
        return version

    async def host_action(self, choice: str, command_id: str = "") -> int:
        version = await super().host_action(choice, command_id)
        self.note(command_id)
        return version


@dataclass
class Seat:
    client: RecordingClient
    #: One log per watch of a game (each begins with a snapshot).
    logs: list[SeatLog] = field(default_factory=list)


@dataclass
class TableLoad:
    """One table: its seat clients and when the host saw each change."""

    table_id: str
    seats: list[Seat]
    changes: list[float] = field(default_factory=list)
    game_over: bool = False


async def seat_up(address: str, index: int) -> TableLoad:
    """A private table at the gateway ``address``: host, guest and two bots, started."""
    host = RecordingClient.connect(address)
    await host.create_table(
        "house",
        options={"game_end": "rounds:3"},
        seat_count=4,
        visibility="private",
        display_name=f"Host{index}",
    )
    guest = RecordingClient.connect(address)
    await guest.join(host.table_id, f"Guest{index}")
    view = await host.get_table()
    for _ in range(sum(not seat.occupied for seat in view.seats)):
        await host.add_bot()
    await host.start()
    return TableLoad(host.table_id, [Seat(host), Seat(guest)])


async def play(load: TableLoad, seat: Seat, host: bool, until: float) -> None:
    """Play game after game until ``until`` (the host starts each next game)."""

    def seen(_change: Any) -> None:
        if host:
            load.changes.append(time.monotonic())

    while time.monotonic() < until:
        log = SeatLog()
        seat.logs.append(log)
        try:
            await play_seat(seat.client, host_rounds=3 if host else None, on_change=seen, log=log)
        except GatewayError as error:  # not one a client resends: noted, then again
            log.refused[error.reason] = log.refused.get(error.reason, 0) + 1
            await asyncio.sleep(0.5)
            continue
        view = log.last_view
        if host and view is not None and view.phase == "game_over":
            load.game_over = True
            with contextlib.suppress(GatewayError):
                await seat.client.host_action("play_again", f"again-{view.version}")
        await asyncio.sleep(0.2)


@dataclass
class LoadRun:
    """What one run under a fault gave: the tables, and when the fault struck and ended."""

    loads: list[TableLoad]
    struck: float
    #: When the strike returned: the struck process or server was back (or the cut healed).
    back: float
    ended: float


async def run_load(
    addresses: Sequence[str],
    tables: int,
    seconds: float,
    fault_at: float,
    strike: Callable[[], None],
) -> LoadRun:
    """``tables`` tables spread over the gateways at ``addresses`` play for ``seconds``;
    ``strike`` runs (in a thread) ``fault_at`` seconds in and returns once it is over."""
    loads = [await seat_up(addresses[n % len(addresses)], n) for n in range(tables)]
    until = time.monotonic() + seconds
    tasks = [
        asyncio.create_task(play(load, seat, index == 0, until))
        for load in loads
        for index, seat in enumerate(load.seats)
    ]
    await asyncio.sleep(fault_at)
    struck = time.monotonic()
    await asyncio.to_thread(strike)
    back = time.monotonic()
    await asyncio.sleep(max(0.0, until - time.monotonic()))
    ended = time.monotonic()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for load in loads:
        for seat in load.seats:
            await seat.client.close()
    return LoadRun(loads, struck, back, ended)
