"""The committed deal as a table sees it: the dealer port, the in-memory dealer, and a
deal turned into the engine's ``DealRound``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from president.deal import deal, new_secret, seated
from president.deal import fingerprint as deal_fingerprint
from president.rules import game as g


@dataclass(frozen=True)
class RoundKey:
    """Which round of which table a deal is for."""

    table_id: str
    game_no: int
    round_no: int


@dataclass(frozen=True)
class DealtCards:
    """A deal: hands by position in the deal order (each in dealt order), and set-aside cards."""

    hands: tuple[tuple[int, ...], ...]
    set_aside: tuple[int, ...]


class SecretLost(LookupError):
    """The dealer answered that it no longer holds a committed round's secret (lost with its
    store): the table records ``DealSecretLost`` and goes on. Before the round's deal, the
    table then commits the round afresh and deals from the new commitment; after the
    round's end, the round stays unverifiable."""


class DealerPort(Protocol):
    """The committed deal, as the table sees the dealer."""

    def commit(self, key: RoundKey, players: int, jokers: bool, hand_size: int | None) -> str:
        """Draw the round's secret; return its fingerprint. Idempotent per round."""

    def deal(self, key: RoundKey) -> DealtCards:
        """Deal the committed round; :class:`SecretLost` when the dealer answers that it
        no longer holds it (the table withdraws the commitment and commits afresh)."""

    def reveal(self, key: RoundKey) -> bytes:
        """The round's secret, once it has ended; :class:`SecretLost` when the dealer
        answers that it no longer holds it (a dealer that does not answer raises any
        other error, and the table waits)."""


def dealt_from_secret(
    secret: bytes, players: int, *, jokers: bool, hand_size: int | None
) -> DealtCards:
    """The deal of ``secret`` (DEAL.md) over positions ``0 .. players-1``."""
    dealt = deal(secret, range(players), jokers=jokers, hand_size=hand_size)
    return DealtCards(dealt.hands, dealt.set_aside)


@dataclass
class LocalDealer:
    """An in-process dealer: secrets in memory. For local games and tests."""

    secret_for: Callable[[RoundKey], bytes] = field(default=lambda _key: new_secret())
    _rounds: dict[RoundKey, tuple[bytes, int, bool, int | None]] = field(default_factory=dict)

    def commit(self, key: RoundKey, players: int, jokers: bool, hand_size: int | None) -> str:
        if key not in self._rounds:
            self._rounds[key] = (self.secret_for(key), players, jokers, hand_size)
        return deal_fingerprint(self._rounds[key][0])

    def deal(self, key: RoundKey) -> DealtCards:
        secret, players, jokers, hand_size = self._held(key)
        return dealt_from_secret(secret, players, jokers=jokers, hand_size=hand_size)

    def reveal(self, key: RoundKey) -> bytes:
        return self._held(key)[0]

    def forget(self, key: RoundKey) -> None:
        """Lose the round's secret, as a dealer whose store failed over without it."""
        self._rounds.pop(key, None)

    def _held(self, key: RoundKey) -> tuple[bytes, int, bool, int | None]:
        try:
            return self._rounds[key]
        except KeyError:
            raise SecretLost(f"no deal was committed for {key}") from None


def deal_command(game: g.GameState, order: Sequence[int], dealt: DealtCards) -> g.DealRound:
    """The engine's ``DealRound`` for hands dealt by position in ``order``."""
    by_seat = seated(dealt.hands, dealt.set_aside, order)
    return g.DealRound(by_seat.masks(len(game.seats)), by_seat.set_aside_mask)


def deal_round(game: g.GameState, secret: bytes) -> g.DealRound:
    """Deal the next round of ``game`` from ``secret`` (DEAL.md), as the engine's command.

    The deal runs over positions 0..n-1 of the engine's deal order; position
    ``k`` is the seat ``deal_order(game)[k]``.
    """
    order = g.deal_order(game)
    dealt = dealt_from_secret(
        secret, len(order), jokers=game.options.jokers, hand_size=g.hand_size(game)
    )
    return deal_command(game, order, dealt)
