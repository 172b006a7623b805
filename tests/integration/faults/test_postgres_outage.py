"""A PostgreSQL restart (fast stop, or kill -9 of the postmaster) on a server of the test's
own: a command in flight is refused UNAVAILABLE STORE_UNAVAILABLE and nothing of it is kept,
the same command sent again runs once when the database is back, and no pooled connection
the server closed is handed out afterwards."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from president.client.errors import GatewayError, connection_lost
from president.dealer.v1 import dealer_pb2 as dpb
from president.dealer.v1 import dealer_pb2_grpc
from president.hosting.dealer import LocalDealer
from president.hosting.host import TableHost
from president.hosting.streams import stream_id
from president.rules import game as g
from president.servicekit.errors import Code
from president.servicekit.grpc_errors import grpc_code
from president.services.dealer.handlers import DealerServicer
from president.services.dealer.vault import SecretVault
from president.services.table.handlers import refusal
from president.store import EventStore, NewEvent, migrate
from tests.support.private_postgres import PrivatePostgres
from tests.support.table_host import bot_table

pytestmark = pytest.mark.postgres


def event(n: int) -> NewEvent:
    return NewEvent("test.Event", f"payload {n}".encode(), {"actor": "test"})


@pytest.mark.parametrize("fault", ["stop", "kill"])
def test_no_dead_pooled_connection_after_a_restart(
    private_postgres: PrivatePostgres, fault: str
) -> None:
    url = private_postgres.create_database()
    migrate(url)
    with EventStore.from_url(url) as store:
        for n in range(1, 6):  # several pooled connections, reads and appends
            store.append("s", n - 1, [event(n)], f"c{n}")
            assert len(store.read_stream("s")) == n
        private_postgres.stop() if fault == "stop" else private_postgres.kill()
        private_postgres.start()
        # The first calls after the restart succeed: no connection the server closed.
        assert len(store.read_stream("s")) == 5
        store.append("s", 5, [event(6)], "c6")
        assert [e.version for e in store.read_stream("s")] == list(range(1, 7))


def test_a_command_during_an_outage_is_unavailable_and_runs_once_when_resent(
    private_postgres: PrivatePostgres,
) -> None:
    url = private_postgres.create_database()
    migrate(url)
    with EventStore.from_url(url) as store:
        host = TableHost(store, LocalDealer())
        bot_table(host)
        version = store.current_version(stream_id("t1"))
        private_postgres.stop()
        with pytest.raises(Exception) as failed:
            host.decide_and_append("t1", g.StartGame(), "start", "p0")
        refused = refusal(failed.value)  # the table service's answer to it
        assert refused.status == Code.UNAVAILABLE
        assert refused.reason == "STORE_UNAVAILABLE"
        # The Python client (and the seat bot) send such a refusal again.
        assert connection_lost(
            GatewayError(grpc_code(refused.status), refused.reason, refused.message)
        )
        private_postgres.start()
        assert store.current_version(stream_id("t1")) == version  # nothing of it was kept
        first = host.decide_and_append("t1", g.StartGame(), "start", "p0")
        again = host.decide_and_append("t1", g.StartGame(), "start", "p0")
        assert first.version == again.version == store.current_version(stream_id("t1"))
        starts = [e for e in store.read_stream(stream_id("t1")) if e.command_id == "start"]
        assert len(starts) == 1


async def _commit_deal(vault: SecretVault) -> GatewayError | None:
    server = grpc.aio.server()
    dealer_pb2_grpc.add_DealerServiceServicer_to_server(DealerServicer(vault), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            request = dpb.CommitDealRequest(
                round=dpb.RoundKey(table_id="t1", game_no=1, round_no=1), players=4
            )
            await dealer_pb2_grpc.DealerServiceStub(channel).CommitDeal(request, timeout=30)
    except grpc.aio.AioRpcError as error:
        return GatewayError.of(error)
    finally:
        await server.stop(None)
    return None


def test_the_dealer_answers_a_database_outage_unavailable(
    private_postgres: PrivatePostgres,
) -> None:
    url = private_postgres.create_database()
    migrate(url)
    with EventStore.from_url(url) as events:
        vault = SecretVault(url, events)
        try:
            private_postgres.stop()
            refused = asyncio.run(_commit_deal(vault))
            assert refused is not None  # was UNKNOWN, which the table does not try again
            assert (refused.code, refused.reason) == (
                grpc.StatusCode.UNAVAILABLE,
                "STORE_UNAVAILABLE",
            )
            private_postgres.start()
            assert asyncio.run(_commit_deal(vault)) is None
        finally:
            vault.close()
