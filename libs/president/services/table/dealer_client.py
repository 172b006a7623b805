"""The dealer as the table sees it: a :class:`DealerPort` over the dealer's gRPC API.

Synchronous on purpose: :class:`TableHost` runs in worker threads. A dealer
that does not answer (restarting, unreachable) is waited for, twice the call
timeout (``PRESIDENT_DEALER_CALL_SECONDS``, 3 s); then the call fails with
``UNAVAILABLE`` (reason ``DEALER_UNAVAILABLE``) and the table settles its
pending deal on its next command. A dealer that answers it no longer holds a round's
secret (``NOT_FOUND`` ``SECRET_LOST``, from ``DealCards`` or ``RevealSecret``) raises
:class:`SecretLost`, which the table records as ``DealSecretLost`` (before the deal, it
then commits the round afresh).
"""

from __future__ import annotations

import time
from typing import Any

import grpc

from president.dealer.v1 import dealer_pb2 as pb
from president.dealer.v1 import dealer_pb2_grpc
from president.hosting.dealer import DealtCards, RoundKey, SecretLost
from president.rules.cards import CardSyntaxError, parse_card
from president.servicekit.channels import internal_sync_channel
from president.servicekit.config import KEEPALIVE, Keepalive
from president.servicekit.errors import Code, ServiceError
from president.servicekit.grpc_errors import error_info
from president.servicekit.tls import PLAINTEXT, TlsSettings

CALL_SECONDS = 3.0
ATTEMPTS = 2
RETRIED = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
SECRET_LOST = "SECRET_LOST"


class GrpcDealer:
    """Commit, deal and reveal through the dealer service."""

    def __init__(
        self,
        address: str,
        timeout: float = CALL_SECONDS,
        tls: TlsSettings = PLAINTEXT,
        keepalive: Keepalive = KEEPALIVE,
    ) -> None:
        self._channel = internal_sync_channel(address, tls, keepalive)
        self._stub: Any = dealer_pb2_grpc.DealerServiceStub(self._channel)
        self._timeout = timeout

    def close(self) -> None:
        self._channel.close()

    def commit(self, key: RoundKey, players: int, jokers: bool, hand_size: int | None) -> str:
        request = pb.CommitDealRequest(
            round=_round(key), players=players, jokers=jokers, hand_size=hand_size or 0
        )
        response: pb.CommitDealResponse = self._call("CommitDeal", request)
        return response.fingerprint

    def deal(self, key: RoundKey) -> DealtCards:
        response: pb.DealCardsResponse = self._call(
            "DealCards", pb.DealCardsRequest(round=_round(key))
        )
        hands = sorted(response.hands, key=lambda hand: hand.position)
        try:
            return DealtCards(
                hands=tuple(tuple(parse_card(card) for card in hand.cards) for hand in hands),
                set_aside=tuple(parse_card(card) for card in response.set_aside),
            )
        except CardSyntaxError as error:
            raise ServiceError(
                Code.INTERNAL, "BAD_DEAL", f"the dealer sent a bad card: {error}"
            ) from None

    def reveal(self, key: RoundKey) -> bytes:
        response: pb.RevealSecretResponse = self._call(
            "RevealSecret", pb.RevealSecretRequest(round=_round(key))
        )
        return bytes.fromhex(response.secret_hex)

    def _call(self, method: str, request: Any) -> Any:
        delay = 0.2
        for attempt in range(ATTEMPTS):
            try:
                return getattr(self._stub, method)(
                    request, timeout=self._timeout, wait_for_ready=True
                )
            except grpc.RpcError as error:
                code = error.code() if isinstance(error, grpc.Call) else None
                if code in RETRIED and attempt + 1 < ATTEMPTS:
                    time.sleep(delay)
                    delay *= 2
                    continue
                detail = error.details() if isinstance(error, grpc.Call) else str(error)
                if code == grpc.StatusCode.NOT_FOUND and _reason(error) == SECRET_LOST:
                    raise SecretLost(
                        f"the dealer no longer holds that round's secret ({detail})"
                    ) from None
                if code in RETRIED:
                    raise ServiceError(
                        Code.UNAVAILABLE,
                        "DEALER_UNAVAILABLE",
                        f"the dealer did not answer ({detail}); try again shortly",
                    ) from None
                raise ServiceError(
                    Code.INTERNAL,
                    "DEALER_FAILED",
                    f"the dealer refused {method}: {detail}",
                ) from None
        raise AssertionError("unreachable")  # pragma: no cover


def _reason(error: grpc.RpcError) -> str | None:
    info = error_info(error)
    return info.reason if info is not None else None


def _round(key: RoundKey) -> pb.RoundKey:
    return pb.RoundKey(table_id=key.table_id, game_no=key.game_no, round_no=key.round_no)
