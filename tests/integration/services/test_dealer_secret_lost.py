"""The table's dealer client over the real dealer service: a round whose secret the
dealer's store does not hold (lost with a failover) is answered ``NOT_FOUND``
``SECRET_LOST`` and raises :class:`SecretLost`, at its reveal and at its deal; a dealer
that does not answer stays ``DEALER_UNAVAILABLE`` (the table waits and tries again)."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import grpc
import pytest
from sqlalchemy import create_engine, text

from president.dealer.v1 import dealer_pb2_grpc
from president.hosting.dealer import RoundKey, SecretLost
from president.servicekit.errors import ServiceError
from president.services.dealer.handlers import DealerServicer
from president.services.dealer.vault import SecretVault
from president.services.table.dealer_client import GrpcDealer
from president.store import EventStore


async def _reveal_through_the_service(vault: SecretVault) -> BaseException | None:
    server = grpc.aio.server()
    dealer_pb2_grpc.add_DealerServiceServicer_to_server(DealerServicer(vault), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    dealer = GrpcDealer(f"127.0.0.1:{port}", timeout=5)
    try:
        await asyncio.to_thread(dealer.reveal, RoundKey("t1", 1, 1))
    except Exception as error:
        return error
    finally:
        dealer.close()
        await server.stop(None)
    return None


def test_a_secret_the_dealer_does_not_hold_is_answered_lost(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with EventStore.from_url(url, migrate=True) as events:
        vault = SecretVault(url, events)
        try:
            refused = asyncio.run(_reveal_through_the_service(vault))
        finally:
            vault.close()
    assert isinstance(refused, SecretLost), refused


def test_a_dealer_that_does_not_answer_is_unavailable_not_lost() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    dealer = GrpcDealer(address, timeout=0.2)
    try:
        with pytest.raises(ServiceError) as refused:
            dealer.reveal(RoundKey("t1", 1, 1))
    finally:
        dealer.close()
    assert refused.value.reason == "DEALER_UNAVAILABLE"


async def _lose_before_the_deal(vault: SecretVault, url: str) -> tuple[str, str, BaseException]:
    """Commit a round through the service, lose it from the dealer's store (a failover that
    missed it), ask for its cards, then commit it again."""
    server = grpc.aio.server()
    dealer_pb2_grpc.add_DealerServiceServicer_to_server(DealerServicer(vault), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    dealer = GrpcDealer(f"127.0.0.1:{port}", timeout=5)
    key = RoundKey("t1", 1, 1)
    try:
        first = await asyncio.to_thread(dealer.commit, key, 4, False, None)
        engine = create_engine(url)
        with engine.begin() as connection:
            connection.execute(text("DELETE FROM dealer_secrets"))
        engine.dispose()
        try:
            await asyncio.to_thread(dealer.deal, key)
        except Exception as error:
            refused: BaseException = error
        else:
            raise AssertionError("the dealer dealt a round it does not hold")
        again = await asyncio.to_thread(dealer.commit, key, 4, False, None)
        await asyncio.to_thread(dealer.deal, key)  # dealt from the new commitment
    finally:
        dealer.close()
        await server.stop(None)
    return first, again, refused


def test_a_round_the_dealer_lost_before_its_deal_is_answered_lost(tmp_path: Path) -> None:
    """DealCards for a committed round the vault lacks: SECRET_LOST (was UNKNOWN_ROUND, which
    the table took as DEALER_FAILED for ever); a new commit draws another secret."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with EventStore.from_url(url, migrate=True) as events:
        vault = SecretVault(url, events)
        try:
            first, again, refused = asyncio.run(_lose_before_the_deal(vault, url))
        finally:
            vault.close()
    assert isinstance(refused, SecretLost), refused
    assert again != first
