"""The dealer's gRPC servicer: protobuf in and out, the vault does the work."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

import grpc

from president.deal import DEAL_VERSION, fingerprint
from president.dealer.v1 import dealer_pb2 as pb
from president.dealer.v1 import dealer_pb2_grpc
from president.hosting.dealer import RoundKey
from president.rules.cards import card_name
from president.servicekit import checks
from president.servicekit.errors import Code, ServiceError, store_unavailable
from president.servicekit.grpc_errors import abort
from president.services.dealer.vault import RoundNotOver, SecretVault, UnknownRound
from president.store import is_transient

MAX_PLAYERS = 27
T = TypeVar("T")


def _key(round_key: pb.RoundKey) -> RoundKey:
    checks.table_id(round_key.table_id)
    checks.round_number(round_key.game_no, round_key.round_no)
    return RoundKey(round_key.table_id, round_key.game_no, round_key.round_no)


class DealerServicer(dealer_pb2_grpc.DealerServiceServicer):
    """Commit, deal, reveal."""

    def __init__(self, vault: SecretVault) -> None:
        self._vault = vault

    async def CommitDeal(
        self, request: pb.CommitDealRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.CommitDealResponse:
        try:
            key = _key(request.round)
            if not 2 <= request.players <= MAX_PLAYERS:
                raise ServiceError(
                    Code.INVALID_ARGUMENT,
                    "INVALID_PLAYERS",
                    f"a deal is for 2 to {MAX_PLAYERS} players, not {request.players}",
                )
            committed = await _in_vault(
                context,
                lambda: self._vault.commit(
                    key, request.players, request.jokers, request.hand_size or None
                ),
            )
        except ServiceError as error:
            await abort(context, error)
        return pb.CommitDealResponse(fingerprint=committed, deal_version=DEAL_VERSION)

    async def DealCards(
        self, request: pb.DealCardsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.DealCardsResponse:
        try:
            key = _key(request.round)
            dealt = await _in_vault(context, lambda: self._vault.deal(key))
        except UnknownRound as error:
            # A round the table committed but the vault lacks (a store failover that missed
            # it), before its deal: the table withdraws that commitment and commits afresh.
            await abort(context, ServiceError(Code.NOT_FOUND, "SECRET_LOST", str(error)))
        except ServiceError as error:
            await abort(context, error)
        return pb.DealCardsResponse(
            hands=[
                pb.DealtHand(position=position, cards=[card_name(card) for card in hand])
                for position, hand in enumerate(dealt.hands)
            ],
            set_aside=[card_name(card) for card in dealt.set_aside],
        )

    async def RevealSecret(
        self, request: pb.RevealSecretRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.RevealSecretResponse:
        try:
            key = _key(request.round)
            committed = await _in_vault(context, lambda: self._vault.reveal(key))
        except UnknownRound as error:
            # A round the table committed but the vault lacks: its secret is lost (a store
            # failover that missed it). The table records that and goes on.
            await abort(context, ServiceError(Code.NOT_FOUND, "SECRET_LOST", str(error)))
        except RoundNotOver as error:
            await abort(
                context,
                ServiceError(Code.FAILED_PRECONDITION, "ROUND_NOT_OVER", str(error)),
            )
        except ServiceError as error:
            await abort(context, error)
        return pb.RevealSecretResponse(
            secret_hex=committed.secret.hex(), fingerprint=fingerprint(committed.secret)
        )


async def _in_vault(context: grpc.aio.ServicerContext[Any, Any], work: Callable[[], T]) -> T:
    """``work()`` in a worker thread; a store failure that passes is UNAVAILABLE
    (STORE_UNAVAILABLE), which the table's dealer client tries again."""
    try:
        return await asyncio.to_thread(work)
    except Exception as error:
        if is_transient(error):
            await abort(context, store_unavailable())
        raise
