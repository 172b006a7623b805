"""PreviewPlay: the play button's words for a chosen set of cards, worked out on this gateway.

The answer comes from the gateway's own copy of the table (its feed), with
the engine's ``decide`` run by :func:`president.rules.button.preview_play`
and nothing committed, so a client may ask on every tap. A refusal carries
the status, reason and sentence the table service would refuse the play with.
"""

from __future__ import annotations

from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.projection import Table
from president.rules.button import preview_play
from president.servicekit.errors import from_domain, to_refusal


def preview_response(table: Table, seat: int, cards: list[int]) -> pb.PreviewPlayResponse:
    """What the button would say if ``seat`` chose ``cards`` (card indexes) at ``table``."""
    preview = preview_play(table.game, seat, cards)
    response = pb.PreviewPlayResponse(version=table.version, playable=preview.playable)
    if preview.refusal is not None:
        response.refused.CopyFrom(to_refusal(from_domain(preview.refusal)))
    else:
        response.label = preview.label
    return response
