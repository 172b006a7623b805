"""DEAL.md cases for the JavaScript implementation, made by the Python one.

``pinned()`` is the project's pinned vectors (``tests/unit/deal/test_deal_vectors.py``)
as JSON, committed as ``web/test/vectors.json``; ``random_cases`` deals many random
secrets, orders, jokers and hand sizes with :mod:`president.deal`, and
``exchange_cases`` makes exchanges as the rules make them (the automatic gives
are :func:`president.rules.cards.strongest`), some tampered, with the verdict
each must get. ``python -m tests.support.deal_vectors`` writes the pinned file.
"""

from __future__ import annotations

import base64
import json
import random
import sys
from pathlib import Path
from typing import Any

from president import deal as deal_mod
from president.events.v1 import events_pb2 as epb
from president.rules.cards import card_name, cards_of, strongest, to_mask
from tests.unit.deal import test_deal_vectors as pinned_module

PINNED_FILE = Path(__file__).resolve().parents[2] / "web" / "test" / "vectors.json"


def pinned() -> dict[str, Any]:
    """The pinned vectors and the step-by-step DEAL.md vector."""
    return {
        "vectors": [
            {
                "name": v.name,
                "secret": v.secret,
                "order": list(v.order),
                "jokers": v.jokers,
                "handSize": v.hand_size,
                "fingerprint": v.fingerprint,
                "hands": [hand.split() for hand in v.hands],
                "setAside": v.set_aside.split(),
            }
            for v in pinned_module.VECTORS
        ],
        "stepSecret": pinned_module.VECTOR_SECRET.hex(),
        "words": list(pinned_module.VECTOR_WORDS),
        "uniform": [list(item) for item in pinned_module.VECTOR_UNIFORM],
        "steps": [
            {"step": name, "deck": deck.split(), "wordsRead": words}
            for name, deck, words in pinned_module.VECTOR_STEPS
        ],
    }


def random_cases(seed: int, count: int) -> list[dict[str, Any]]:
    """Deals of random secrets, seat orders (any seat numbers), jokers and hand sizes."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        jokers = rng.random() < 0.5
        deck_size = 54 if jokers else 52
        players = rng.choice([2, 3, 4, 5, 6, 7, 8, rng.randint(2, deck_size)])
        seats = rng.sample(range(players + rng.randint(0, 3)), players)
        hand_size = rng.randint(1, deck_size // players) if rng.random() < 0.4 else None
        secret = rng.randbytes(32)
        dealt = deal_mod.hands_by_seat(secret, seats, jokers=jokers, hand_size=hand_size)
        cases.append(
            {
                "secret": secret.hex(),
                "order": seats,
                "jokers": jokers,
                "handSize": hand_size,
                "fingerprint": deal_mod.fingerprint(secret),
                "hands": {
                    str(seat): [card_name(card) for card in hand]
                    for seat, hand in dealt.hands.items()
                },
                "setAside": [card_name(card) for card in dealt.set_aside],
            }
        )
    return cases


def _names(mask: int) -> list[str]:
    return [card_name(card) for card in cards_of(mask)]


def _gift(giver: int, receiver: int, cards: int, automatic: bool) -> dict[str, Any]:
    return {"giver": giver, "receiver": receiver, "cards": _names(cards), "automatic": automatic}


def exchange_cases(seed: int, count: int) -> list[dict[str, Any]]:
    """A seat's view of a round's exchange and whether every check must pass.

    Four or five players; the bottom gives the top its strongest cards, the
    second-bottom the second its strongest; each receiver returns cards of its
    choice. A third of the cases are tampered with: an automatic give that is
    not the strongest, or a return of a card the returner never held.
    """
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        players = rng.choice([4, 5])
        order = list(range(players))
        rng.shuffle(order)
        secret = rng.randbytes(32)
        dealt = deal_mod.hands_by_seat(secret, order)
        hands = {seat: to_mask(cards) for seat, cards in dealt.hands.items()}
        standings = list(range(players))
        rng.shuffle(standings)
        gifts: list[dict[str, Any]] = []
        after = dict(hands)
        pairs = [(standings[-1], standings[0], 2), (standings[-2], standings[1], 1)]
        for giver, receiver, n in pairs:
            given = strongest(hands[giver], n)
            after[giver] &= ~given
            after[receiver] |= given
            gifts.append(_gift(giver, receiver, given, automatic=True))
        for giver, receiver, n in pairs:
            returned = to_mask(rng.sample(cards_of(after[receiver]), n))
            gifts.append(_gift(receiver, giver, returned, automatic=False))
        tamper = rng.choice(["none", "none", "weak-give", "foreign-return"])
        if tamper == "weak-give":
            giver = pairs[0][0]
            weaker = cards_of(hands[giver] & ~strongest(hands[giver], 2))
            gifts[0]["cards"] = [gifts[0]["cards"][0], card_name(rng.choice(weaker))]
        elif tamper == "foreign-return":
            returner = pairs[0][1]
            foreign = cards_of(~after[returner] & ((1 << 52) - 1))
            gifts[2]["cards"] = [card_name(rng.choice(foreign)), gifts[2]["cards"][1]]
        seat = rng.choice([pairs[0][0], pairs[0][1]])
        cases.append(
            {
                "secret": secret.hex(),
                "order": order,
                "seat": seat,
                "fingerprint": deal_mod.fingerprint(secret),
                "dealtHand": _names(hands[seat]),
                "gifts": gifts,
                "ok": tamper == "none",
            }
        )
    return cases


def pinned_text() -> str:
    """``pinned()`` as the committed file holds it: one line per vector or list."""
    lines = []
    for key, value in pinned().items():
        if isinstance(value, list):
            items = ",\n  ".join(json.dumps(item) for item in value)
            lines.append(f' "{key}": [\n  {items}\n ]')
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _b64(message: Any) -> str:
    return base64.b64encode(message.SerializeToString()).decode()


def lost_case() -> dict[str, Any]:
    """A round whose secret the operator lost: its DealCommitted, then DealSecretLost."""
    committed = epb.DealCommitted(
        game_no=2, round_no=3, fingerprint="ab" * 32, deal_order=[0, 1, 2, 3], players=4
    )
    lost = epb.DealSecretLost(game_no=2, round_no=3, fingerprint="ab" * 32)
    return {
        "committed": _b64(committed),
        "lost": _b64(lost),
        "expected": {"gameNo": 2, "roundNo": 3, "fingerprint": "ab" * 32},
    }


def event_cases(seed: int, count: int) -> list[dict[str, Any]]:
    """Events encoded by the Python protobuf runtime, with the fields the JS reader gives.

    Each group of four is one round (DealCommitted, RoundStarted, CardsGiven,
    DealRevealed), seat 2 holding cards in RoundStarted.
    """
    rng = random.Random(seed)
    cases: list[dict[str, Any]] = []
    for _ in range(count):
        secret = rng.randbytes(32)
        order = rng.sample(range(rng.randint(4, 8)), rng.randint(4, 4))
        game_no, round_no = rng.randint(1, 300), rng.randint(1, 300)
        jokers = rng.random() < 0.5
        hand_size = rng.choice([0, 3, 10])
        committed = epb.DealCommitted(
            game_no=game_no,
            round_no=round_no,
            fingerprint=deal_mod.fingerprint(secret),
            deal_version=deal_mod.DEAL_VERSION,
            deal_order=order,
            players=len(order),
            options={"jokers": "on"},
            jokers=jokers,
            hand_size=hand_size,
        )
        cards = [card_name(card) for card in rng.sample(range(54), 12)]
        hands = [epb.Hand(seat=seat, cards=cards[:6] if seat == 2 else []) for seat in range(5)]
        started = epb.RoundStarted(round_no=round_no, preset="club", hands=hands, players=order)
        given = epb.CardsGiven(
            giver=rng.randint(0, 7), receiver=rng.randint(0, 7), cards=cards[6:8],
            automatic=rng.random() < 0.5,
        )  # fmt: skip
        revealed = epb.DealRevealed(game_no=game_no, round_no=round_no, secret_hex=secret.hex())
        cases += [
            {
                "reader": "dealCommitted",
                "payload": _b64(committed),
                "expected": {
                    "gameNo": game_no,
                    "roundNo": round_no,
                    "fingerprint": committed.fingerprint,
                    "dealOrder": order,
                    "jokers": jokers,
                    "handSize": hand_size,
                },
            },
            {
                "reader": "roundStarted",
                "payload": _b64(started),
                "expected": {
                    "roundNo": round_no,
                    "hands": [{"seat": h.seat, "cards": list(h.cards)} for h in hands],
                },
            },
            {
                "reader": "cardsGiven",
                "payload": _b64(given),
                "expected": {
                    "giver": given.giver,
                    "receiver": given.receiver,
                    "cards": list(given.cards),
                    "automatic": given.automatic,
                },
            },
            {
                "reader": "dealRevealed",
                "payload": _b64(revealed),
                "expected": {"gameNo": game_no, "roundNo": round_no, "secretHex": secret.hex()},
            },
        ]
    return cases


if __name__ == "__main__":
    PINNED_FILE.write_text(pinned_text())
    sys.stdout.write(f"wrote {PINNED_FILE}\n")
