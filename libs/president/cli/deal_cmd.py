"""``president deal``: re-create a committed deal (DEAL.md) from its secret."""

from __future__ import annotations

import json
import sys

import typer

from president import deal as deal_mod
from president.rules.cards import card_name


class _BadInput(ValueError):
    """Input a person typed wrong: one line on stderr, exit code 2."""


def _parse_secret(text: str | None) -> bytes:
    if text is None:
        raise _BadInput("--secret is required: the round's secret, 64 hex digits (32 bytes).")
    try:
        secret = bytes.fromhex(text.strip())
    except ValueError:
        raise _BadInput(
            f"--secret must be written in hex digits (0-9, a-f), two per byte; got {text!r}."
        ) from None
    if len(secret) != deal_mod.SECRET_SIZE:
        raise _BadInput(
            f"--secret must be {deal_mod.SECRET_SIZE} bytes (64 hex digits); "
            f"this one is {len(secret)} bytes."
        )
    return secret


def _parse_order(text: str | None) -> list[int]:
    if text is None:
        raise _BadInput("--order is required: the seats in the order they get cards, as 0,1,2,3.")
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise _BadInput(
            f"--order must be seat numbers separated by commas, as 0,1,2,3; got {text!r}."
        ) from None


def _parse_hand_size(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise _BadInput(f"--hand-size must be a whole number; got {text!r}.") from None


def deal(
    secret: str | None = typer.Option(
        None,
        "--secret",
        metavar="HEX",
        help="The round's secret in hex: 64 digits (32 bytes). Required.",
    ),
    order: str | None = typer.Option(
        None,
        "--order",
        metavar="SEATS",
        help="Deal order: the seats, first to receive first, separated by commas. Required.",
    ),
    jokers: bool = typer.Option(False, "--jokers", help="The deck has BJ and RJ (54 cards)."),
    hand_size: str | None = typer.Option(
        None,
        "--hand-size",
        metavar="N",
        help="Stop when every seat holds this many; the rest are set aside.",
    ),
) -> None:
    """Re-create a deal from its secret and print it as one JSON object.

    The object holds the version tag, the fingerprint, the hands by seat (each
    in the order its cards were dealt) and the cards set aside.
    """
    try:
        dealt = deal_mod.deal(
            _parse_secret(secret),
            _parse_order(order),
            jokers=jokers,
            hand_size=_parse_hand_size(hand_size),
        )
    except ValueError as error:  # _BadInput, or the deal's own sentence
        typer.echo(str(error), err=True)
        raise typer.Exit(2) from None
    result = {
        "version": deal_mod.DEAL_VERSION,
        "fingerprint": dealt.fingerprint,
        "hands": [[card_name(card) for card in hand] for hand in dealt.hands],
        "set_aside": [card_name(card) for card in dealt.set_aside],
    }
    sys.stdout.write(json.dumps(result) + "\n")


def register(app: typer.Typer) -> None:
    """Add ``deal`` to the app."""
    app.command("deal")(deal)
