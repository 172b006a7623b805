"""The timer's gRPC servicer: the running deadlines, for operators."""

from __future__ import annotations

from typing import Any

import grpc

from president.hosting.deadlines import Deadline
from president.servicekit import checks
from president.servicekit.errors import ServiceError
from president.servicekit.grpc_errors import abort
from president.services.timer.deadlines import DeadlineBoard
from president.timer.v1 import timer_pb2 as pb
from president.timer.v1 import timer_pb2_grpc


def deadline_message(due: Deadline) -> pb.Deadline:
    """The protobuf of a deadline."""
    message = pb.Deadline(
        table_id=due.table_id,
        kind=due.kind,
        timer_key=due.timer_key,
        expires_at_ms=int(due.expires_at.timestamp() * 1000),
    )
    if due.seat is not None:
        message.seat = due.seat
    return message


class TimerServicer(timer_pb2_grpc.TimerServiceServicer):
    """Lists what the timer holds."""

    def __init__(self, board: DeadlineBoard) -> None:
        self._board = board

    async def ListDeadlines(
        self, request: pb.ListDeadlinesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ListDeadlinesResponse:
        if request.table_id:
            try:
                checks.table_id(request.table_id)
            except ServiceError as error:
                await abort(context, error)
            due = self._board.get(request.table_id)
            deadlines = [due] if due is not None else []
        else:
            deadlines = list(self._board)
        return pb.ListDeadlinesResponse(deadlines=[deadline_message(due) for due in deadlines])
