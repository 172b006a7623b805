"""Driving a TableHost in tests, without processes: a bot table, the human's next move,
dealers that fail or watch their callers."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field

from president.hosting.dealer import DealtCards, LocalDealer, RoundKey, SecretLost
from president.hosting.host import TableHost
from president.hosting.seat_views import table_view
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import mask_of
from president.rules.options import options_for
from president.servicekit.errors import Code, ServiceError


@dataclass
class FlakyDealer(LocalDealer):
    """A local dealer whose deal fails while ``down`` is set, like a dealer being restarted;
    its reveal fails while ``reveals_down`` is set, and answers that the secret is lost while
    ``secrets_lost`` is. The rounds in ``loses_before_deal`` it loses (once each) when
    asked to deal them, as a dealer whose store failed over without them."""

    down: bool = False
    reveals_down: bool = False
    secrets_lost: bool = False
    deals: list[RoundKey] = field(default_factory=list)
    loses_before_deal: set[tuple[int, int]] = field(default_factory=set)

    def deal(self, key: RoundKey) -> DealtCards:
        if self.down:
            raise ServiceError(Code.UNAVAILABLE, "DEALER_UNAVAILABLE", "down")
        if (key.game_no, key.round_no) in self.loses_before_deal:
            self.loses_before_deal.discard((key.game_no, key.round_no))
            self.forget(key)
        self.deals.append(key)
        return super().deal(key)

    def reveal(self, key: RoundKey) -> bytes:
        if self.down or self.reveals_down:
            raise ServiceError(Code.UNAVAILABLE, "DEALER_UNAVAILABLE", "down")
        if self.secrets_lost:
            raise SecretLost(f"no deal was committed for {key}")
        return super().reveal(key)


def bot_table(host: TableHost, table_id: str = "t1") -> None:
    options = options_for("classic", {"game_end": "rounds:2"})
    host.create(table_id, options, seat_count=4, host_player_id="p0")  # p0 hosts
    host.decide_and_append(table_id, g.SitDown(0, "p0"), f"{table_id}-sit-0", "server")
    for seat in (1, 2, 3):
        host.decide_and_append(
            table_id, g.SitDown(seat, f"b{seat}", True), f"{table_id}-sit-{seat}", "p0"
        )


def human_move(host: TableHost, table_id: str) -> rnd.Command | g.GameCommand | None:
    view = table_view(host.load(table_id), 0)
    if view.phase == "game_over":
        return None
    if view.phase == "between_rounds":
        return g.NextRound()
    action = view.round.legal[0]
    if action.verb == "play":
        return rnd.PlayCards(0, mask_of(list(action.cards)), view.round.trick_version)
    if action.verb == "pass":
        return rnd.Pass(0, view.round.trick_version)
    return rnd.ReturnCards(0, mask_of(list(action.cards)))


def fixed_secret(key: RoundKey) -> bytes:
    """The same secret for the same round, whatever store it is dealt in."""
    return hashlib.sha256(f"{key.table_id}/{key.game_no}/{key.round_no}".encode()).digest()


@dataclass
class WatchedDealer(LocalDealer):
    """A local dealer that notes the thread of every call, and fails one made while
    ``forbidden`` is set."""

    forbidden: bool = False
    threads: list[int] = field(default_factory=list)

    def _called(self) -> None:
        if self.forbidden:
            raise AssertionError("the dealer was called by a command told not to call it")
        self.threads.append(threading.get_ident())

    def commit(self, key: RoundKey, players: int, jokers: bool, hand_size: int | None) -> str:
        self._called()
        return super().commit(key, players, jokers, hand_size)

    def deal(self, key: RoundKey) -> DealtCards:
        self._called()
        return super().deal(key)

    def reveal(self, key: RoundKey) -> bytes:
        self._called()
        return super().reveal(key)
