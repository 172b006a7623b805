"""The table version a client's command was chosen on, read from its request.

Every command request may carry ``expected_version`` (the version of the view
the player chose on); the table service then runs the command only on that
version and refuses it ABORTED (``STALE``) once the table has moved on.
"""

from __future__ import annotations

from president.gateway.v1 import gateway_pb2 as pb

#: The requests that carry ``expected_version``.
CommandRequest = (
    pb.PlayRequest
    | pb.PassRequest
    | pb.ReturnCardsRequest
    | pb.HostActionRequest
    | pb.StartGameRequest
    | pb.AddBotRequest
    | pb.RemoveSeatRequest
    | pb.LeaveRequest
    | pb.ReactRequest
    | pb.SendChatRequest
    | pb.MuteSeatRequest
    | pb.HandOverHostRequest
)


def expected_version(request: CommandRequest) -> int | None:
    """The version the command was chosen on, or None when the client named none."""
    return request.expected_version if request.HasField("expected_version") else None
