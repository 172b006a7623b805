"""CheckDeal: re-create a finished round's deal from its revealed secret and compare.

From a table's stored events: the round's ``DealCommitted`` (fingerprint,
deal order, hand size, jokers), its ``RoundStarted`` (the hands as dealt) and
its ``DealRevealed`` (the secret). Before the reveal nothing is answered
(FAILED_PRECONDITION, ROUND_NOT_OVER): no secret, no hand leaves early.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc

from president import codec
from president.deal import hands_by_seat, verify_fingerprint
from president.events.v1 import events_pb2 as epb
from president.gateway.v1 import gateway_pb2 as pb
from president.rules.cards import card_name, mask_of, to_mask
from president.servicekit.errors import ServiceError

COMMITTED = codec.type_name(epb.DealCommitted)
STARTED = codec.type_name(epb.RoundStarted)
REVEALED = codec.type_name(epb.DealRevealed)


def check_deal(
    events: Sequence[epb.EventEnvelope], game_no: int, round_no: int
) -> pb.CheckDealResponse:
    """The committed deal of a finished round and whether it checks out."""
    committed: epb.DealCommitted | None = None
    started: epb.RoundStarted | None = None
    revealed: epb.DealRevealed | None = None
    for envelope in events:
        if envelope.type == COMMITTED:
            message = epb.DealCommitted.FromString(envelope.payload)
            if (message.game_no, message.round_no) == (game_no, round_no):
                committed, started = message, None
        elif envelope.type == STARTED and committed is not None and started is None:
            started = epb.RoundStarted.FromString(envelope.payload)
        elif envelope.type == REVEALED and committed is not None:
            secret = epb.DealRevealed.FromString(envelope.payload)
            if (secret.game_no, secret.round_no) == (game_no, round_no):
                revealed = secret
                break
    if committed is None:
        raise ServiceError(
            grpc.StatusCode.NOT_FOUND,
            "ROUND_NOT_FOUND",
            f"round {round_no} of game {game_no} was never dealt at this table",
        )
    if revealed is None:
        raise ServiceError(
            grpc.StatusCode.FAILED_PRECONDITION,
            "ROUND_NOT_OVER",
            f"round {round_no} of game {game_no} has not ended: its secret is revealed only then",
        )
    return _verify(committed, started, revealed)


def _verify(
    committed: epb.DealCommitted, started: epb.RoundStarted | None, revealed: epb.DealRevealed
) -> pb.CheckDealResponse:
    out = pb.CheckDealResponse(
        fingerprint=committed.fingerprint,
        secret_hex=revealed.secret_hex,
        deal_order=committed.deal_order,
    )
    problems: list[str] = []
    try:
        secret = bytes.fromhex(revealed.secret_hex)
    except ValueError:
        out.problem = "the revealed secret is not hexadecimal"
        return out
    if not verify_fingerprint(secret, committed.fingerprint):
        problems.append(
            "the revealed secret does not match the fingerprint committed before the deal"
        )
    try:
        dealt = hands_by_seat(
            secret,
            committed.deal_order,
            jokers=committed.jokers,
            hand_size=committed.hand_size or None,
        )
    except ValueError as error:
        out.problem = f"the deal cannot be re-created: {error}"
        return out
    by_seat = dealt.hands
    for seat in sorted(by_seat):
        out.hands.append(epb.Hand(seat=seat, cards=[card_name(card) for card in by_seat[seat]]))
    out.set_aside.extend(card_name(card) for card in dealt.set_aside)
    if started is None:
        problems.append("the log holds no dealt hands for this round")
    else:
        recorded = {hand.seat: mask_of(list(hand.cards)) for hand in started.hands if hand.cards}
        expected = {seat: to_mask(cards) for seat, cards in by_seat.items()}
        for seat in sorted(set(recorded) | set(expected)):
            if recorded.get(seat, 0) != expected.get(seat, 0):
                problems.append(f"seat {seat} was dealt other cards than the secret gives")
        if mask_of(list(started.set_aside)) != dealt.set_aside_mask:
            problems.append("the cards set aside are not those the secret gives")
    out.verified = not problems
    out.problem = "; ".join(problems)
    return out
