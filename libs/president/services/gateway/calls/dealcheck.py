"""CheckDeal: re-create a finished round's deal from its revealed secret and compare.

From a table's stored events: the round's ``DealCommitted`` (fingerprint,
deal order, hand size, jokers), its ``RoundStarted`` (the hands as dealt) and
its ``CardsGiven`` (the exchange) and its ``DealRevealed`` (the secret).
Before the reveal nothing is answered (FAILED_PRECONDITION, ROUND_NOT_OVER):
no secret, no hand leaves early. A round whose secret the operator's dealer lost
(``DealSecretLost``) can never be checked: DATA_LOSS, SECRET_LOST; one lost before its
deal was committed afresh, and the new commitment is the one checked. The exchange is
checked against the re-created hands as DEAL.md's "Verifying" says: the automatic gives must be
the giver's strongest cards of the hand it was dealt, and a free return must
go back to a seat that gave to the returner, as many cards, from the hand the
returner held after the automatic gives.
"""

from __future__ import annotations

from collections.abc import Sequence

from president import codec
from president.deal import hands_by_seat, verify_fingerprint
from president.events.v1 import events_pb2 as epb
from president.gateway.v1 import gateway_pb2 as pb
from president.rules.cards import card_name, mask_of, names, strongest, to_mask
from president.servicekit.errors import Code, ServiceError

COMMITTED = codec.type_name(epb.DealCommitted)
STARTED = codec.type_name(epb.RoundStarted)
REVEALED = codec.type_name(epb.DealRevealed)
LOST = codec.type_name(epb.DealSecretLost)
GIVEN = codec.type_name(epb.CardsGiven)


def check_deal(
    events: Sequence[epb.EventEnvelope], game_no: int, round_no: int
) -> pb.CheckDealResponse:
    """The committed deal of a finished round and whether it checks out."""
    committed: epb.DealCommitted | None = None
    started: epb.RoundStarted | None = None
    revealed: epb.DealRevealed | None = None
    gifts: list[epb.CardsGiven] = []
    for envelope in events:
        if envelope.type == COMMITTED:
            message = epb.DealCommitted.FromString(envelope.payload)
            if (message.game_no, message.round_no) == (game_no, round_no):
                committed, started, gifts = message, None, []
        elif envelope.type == STARTED and committed is not None and started is None:
            started = epb.RoundStarted.FromString(envelope.payload)
        elif envelope.type == GIVEN and started is not None:
            gifts.append(epb.CardsGiven.FromString(envelope.payload))
        elif envelope.type == REVEALED and committed is not None:
            secret = epb.DealRevealed.FromString(envelope.payload)
            if (secret.game_no, secret.round_no) == (game_no, round_no):
                revealed = secret
                break
        elif envelope.type == LOST and committed is not None:
            lost = epb.DealSecretLost.FromString(envelope.payload)
            if (lost.game_no, lost.round_no) == (game_no, round_no) and started is None:
                committed = None  # withdrawn before its deal: the round is committed afresh
            elif (lost.game_no, lost.round_no) == (game_no, round_no):
                raise ServiceError(
                    Code.DATA_LOSS,
                    "SECRET_LOST",
                    f"the operator lost the secret of round {round_no} of game {game_no} "
                    f"(fingerprint {lost.fingerprint}): its deal cannot be checked, ever",
                )
    if committed is None:
        raise ServiceError(
            Code.NOT_FOUND,
            "ROUND_NOT_FOUND",
            f"round {round_no} of game {game_no} was never dealt at this table",
        )
    if revealed is None:
        raise ServiceError(
            Code.FAILED_PRECONDITION,
            "ROUND_NOT_OVER",
            f"round {round_no} of game {game_no} has not ended: its secret is revealed only then",
        )
    return _verify(committed, started, revealed, gifts)


def _verify(
    committed: epb.DealCommitted,
    started: epb.RoundStarted | None,
    revealed: epb.DealRevealed,
    gifts: Sequence[epb.CardsGiven],
) -> pb.CheckDealResponse:
    out = pb.CheckDealResponse(
        fingerprint=committed.fingerprint,
        secret_hex=revealed.secret_hex,
        deal_order=committed.deal_order,
        exchange=gifts,
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
    hands, exchange_problems = check_exchange(
        {seat: to_mask(cards) for seat, cards in by_seat.items()}, gifts
    )
    for seat in sorted(hands):
        out.exchanged_hands.append(epb.Hand(seat=seat, cards=names(hands[seat])))
    out.exchange_verified = not exchange_problems
    out.exchange_problem = "; ".join(exchange_problems)
    problems.extend(exchange_problems)
    out.verified = not problems
    out.problem = "; ".join(problems)
    return out


def check_exchange(
    dealt: dict[int, int], gifts: Sequence[epb.CardsGiven]
) -> tuple[dict[int, int], list[str]]:
    """The hands after the recorded exchange (as card masks) and what in it did not agree.

    ``dealt`` is the hands re-created from the secret, by seat.
    """
    hands = dict(dealt)
    problems: list[str] = []
    owed: dict[tuple[int, int], int] = {}  # (returner, to whom) -> cards owed back
    automatic = [gift for gift in gifts if gift.automatic]
    returns = [gift for gift in gifts if not gift.automatic]
    for gift in automatic:
        cards = _named(gift, "automatic give", problems)
        if cards is None:
            continue
        count = cards.bit_count()
        expected = strongest(dealt.get(gift.giver, 0), count)
        if cards != expected:
            problems.append(
                f"seat {gift.giver} gave seat {gift.receiver} {' '.join(gift.cards)}, but the "
                f"strongest {count} of the hand it was dealt are {' '.join(names(expected))}"
            )
        hands[gift.giver] = hands.get(gift.giver, 0) & ~cards
        hands[gift.receiver] = hands.get(gift.receiver, 0) | cards
        owed[gift.receiver, gift.giver] = owed.get((gift.receiver, gift.giver), 0) + count
    for gift in returns:
        cards = _named(gift, "return", problems)
        if cards is None:
            continue
        count = cards.bit_count()
        due = owed.pop((gift.giver, gift.receiver), None)
        if due is None:
            problems.append(
                f"seat {gift.giver} returned cards to seat {gift.receiver}, "
                "which gave it none in this exchange"
            )
        elif due != count:
            problems.append(
                f"seat {gift.giver} returned {count} cards to seat {gift.receiver}, "
                f"which gave it {due}"
            )
        held = hands.get(gift.giver, 0)
        if cards & ~held:
            problems.append(
                f"seat {gift.giver} returned {' '.join(names(cards & ~held))}, "
                "which it did not hold after the automatic gives"
            )
        hands[gift.giver] = held & ~cards
        hands[gift.receiver] = hands.get(gift.receiver, 0) | cards
    return hands, problems


def _named(gift: epb.CardsGiven, what: str, problems: list[str]) -> int | None:
    """The cards of a give or a return as a mask (None, and a problem said, if unreadable)."""
    try:
        return mask_of(list(gift.cards))
    except ValueError:
        problems.append(f"seat {gift.giver}'s {what} names no cards: {gift.cards}")
        return None
