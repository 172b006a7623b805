"""Helpers for the timer and scoring end-to-end tests: a stack of a few services, and a
synchronous client of the table service that drives tables as the server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import grpc

from president import codec
from president.events.v1 import events_pb2 as pb
from president.game.v1 import game_pb2 as gpb
from president.servicekit.launcher import Stack
from president.table.v1 import table_pb2 as tpb
from president.table.v1 import table_pb2_grpc
from tests.support.servers import delete_stream, isolated_env

SERVER = gpb.Actor(player_id="server", seat=-1)
T = TypeVar("T")


@contextmanager
def service_stack(
    workdir: Path,
    database_url: str,
    nats_url: str,
    services: tuple[str, ...],
    env: dict[str, str] | None = None,
) -> Iterator[Stack]:
    """Some of the services on an isolated JetStream stream, deleted afterwards."""
    environment = {**isolated_env(), **(env or {})}
    stack = Stack(workdir, database_url, nats_url, environment)
    try:
        yield stack.start(services=services)
    finally:
        stack.stop()
        asyncio.run(delete_stream(nats_url, environment["PRESIDENT_STREAM"]))


def wait_until(
    probe: Callable[[], T | None], timeout: float, what: str, interval: float = 0.05
) -> T:
    """Poll ``probe`` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def event_name(item: pb.EventEnvelope) -> str:
    return item.type.rsplit(".", 1)[-1]


def event_at(item: pb.EventEnvelope) -> datetime:
    return datetime.fromisoformat(item.time)


def message(item: pb.EventEnvelope) -> Any:
    return codec.parse(item.type, item.payload)


class Tables:
    """The table service, driven as the server (which may act for any seat)."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub: Any = table_pb2_grpc.TableServiceStub(self.channel)
        self._commands = 0

    def close(self) -> None:
        self.channel.close()

    def create(self, table_id: str, preset: str, seats: int, **options: str) -> None:
        self.stub.CreateTable(
            tpb.CreateTableRequest(
                table_id=table_id,
                options=gpb.TableOptions(preset=preset, options=options),
                seat_count=seats,
                command_id=f"create-{table_id}",
            ),
            timeout=10,
        )

    def run(self, table_id: str, command: gpb.Command) -> int:
        self._commands += 1
        response = self.stub.ExecuteCommand(
            tpb.ExecuteCommandRequest(
                table_id=table_id,
                command_id=f"{table_id}-cmd-{self._commands}-{time.monotonic_ns()}",
                actor=SERVER,
                command=command,
            ),
            timeout=30,
        )
        return int(response.version)

    def sit(self, table_id: str, seat: int, player: str, bot: bool) -> int:
        return self.run(
            table_id,
            gpb.Command(sit_down=gpb.SitDown(seat=seat, player_id=player, is_bot=bot)),
        )

    def leave(self, table_id: str, seat: int) -> int:
        return self.run(table_id, gpb.Command(leave=gpb.Leave(seat=seat)))

    def start(self, table_id: str) -> int:
        return self.run(table_id, gpb.Command(start_game=gpb.StartGame()))

    def next_round(self, table_id: str) -> int:
        return self.run(table_id, gpb.Command(next_round=gpb.NextRound()))

    def play_again(self, table_id: str) -> int:
        return self.run(table_id, gpb.Command(play_again=gpb.PlayAgain()))

    def events(self, table_id: str, after: int = 0) -> list[pb.EventEnvelope]:
        response = self.stub.ReadEvents(
            tpb.ReadEventsRequest(table_id=table_id, after_version=after), timeout=10
        )
        return list(response.events)

    def phase(self, table_id: str) -> str:
        response = self.stub.GetTable(tpb.GetTableRequest(table_id=table_id), timeout=10)
        return str(response.view.phase)

    def play_round_for_everyone(self, table_id: str) -> None:
        """Make the first legal move of whoever is to act (as the server) until the round ends."""
        for _ in range(500):
            view = self.stub.GetTable(tpb.GetTableRequest(table_id=table_id), timeout=10).view
            if view.phase != "round" or view.round.phase == "over":
                return
            seat = view.round.to_act
            mine = self.stub.GetTable(
                tpb.GetTableRequest(table_id=table_id, seat=seat), timeout=10
            ).view
            if not mine.round.legal:
                time.sleep(0.02)
                continue
            action = mine.round.legal[0]
            if action.verb == "play":
                command = gpb.Command(play_cards=gpb.PlayCards(seat=seat, cards=action.cards))
            else:
                command = gpb.Command(**{"pass": gpb.Pass(seat=seat)})
            try:
                self.run(table_id, command)
            except grpc.RpcError:
                pass  # the turn timer acted first
        raise AssertionError(f"{table_id}: the round did not end")

    def play_game(self, table_id: str) -> None:
        """Ask for next rounds until the game in progress ends (bots play every seat)."""
        for _ in range(50):
            if self.phase(table_id) != "between_rounds":
                return
            self.next_round(table_id)
        raise AssertionError(f"{table_id}: the game did not end")
