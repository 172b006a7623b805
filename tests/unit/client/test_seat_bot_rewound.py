"""A bot seat whose stream ends DATA_LOSS HISTORY_REWOUND (the table's database failed over
and lost changes the stream showed) watches again from a snapshot, not from the lost version.

The gateway is a fake of the client's own port: it records where each watch starts."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from president.client.errors import GatewayError
from president.client.seat_bot import play_seat
from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from tests.chaos.checks import out_of_order


def change(version: int, phase: str) -> pb.WatchResponse:
    return pb.WatchResponse(version=version, view=gpb.TableView(version=version, phase=phase))


class RewoundGateway:
    """Shows versions 1 to 12, then ends the stream as rewound; the store kept only 9."""

    def __init__(self) -> None:
        self.watched_from: list[int] = []

    async def watch(self, from_version: int = 0) -> AsyncIterator[pb.WatchResponse]:
        self.watched_from.append(from_version)
        if len(self.watched_from) == 1:
            yield change(12, "lobby")
            raise GatewayError(
                grpc.StatusCode.DATA_LOSS, "HISTORY_REWOUND", "the table's history was rewound"
            )
        snapshot = change(9, "game_over")
        snapshot.snapshot = True
        yield snapshot


async def test_a_rewound_stream_is_watched_again_from_a_snapshot() -> None:
    gateway = RewoundGateway()
    log = await play_seat(gateway)  # type: ignore[arg-type]
    assert gateway.watched_from == [0, 0]  # not from 12: that history never happened
    assert log.reconnects == 1
    assert log.last_view is not None and log.last_view.version == 9


async def test_the_snapshot_after_a_rewind_is_no_disorder_for_the_checks() -> None:
    """The chaos checks count a watch's step back as disorder, except the snapshot a watch
    starts again from after HISTORY_REWOUND, which the seat's log marks (before: every rewound
    watcher counted one, and the asynchronous failover's run failed on order)."""
    log = await play_seat(RewoundGateway())  # type: ignore[arg-type]
    assert log.rewinds == [1]
    assert out_of_order(log.responses, log.rewinds) == 0
    assert out_of_order(log.responses) == 1  # unmarked, the same step back is disorder
