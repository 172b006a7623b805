"""No client can wear the gateway down: rate limits per identity and per peer, stream limits
per identity, per peer and per connection, and the web edge naming the browser's address.

One stack (SQLite, the machine's NATS, the web edge) with small limits, so
each is reached in a few calls; the limits' arithmetic has unit tests
(``tests/unit/services/test_rate_limits.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import grpc
import httpx
import pytest
from google.rpc import error_details_pb2, status_pb2

from president.client import GatewayClient, GatewayError
from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.gateway.v1 import gateway_pb2_grpc
from president.players.v1 import players_pb2 as ppb
from president.servicekit.launcher import SERVICES, Stack
from president.servicekit.peers import EDGE_SECRET, FORWARDED_PEER
from tests.support.servers import isolated_env, sqlite_stack_in
from tests.support.web_edge import SERVICE_PATH, error_reason

STREAMS_PER_IDENTITY = 2
STREAMS_PER_PEER = 5
STREAMS_PER_CONNECTION = 3
GUESTS_PER_PEER = 30
GUEST_WINDOW_SECONDS = 60
LIMITS = {
    "PRESIDENT_LIMITS_SCALE": "1",
    "PRESIDENT_RATE_CREATE_TABLE": "3/60",
    "PRESIDENT_RATE_PASSWORD": "3/60",
    "PRESIDENT_RATE_GUEST_PEER": f"{GUESTS_PER_PEER}/{GUEST_WINDOW_SECONDS}",
    "PRESIDENT_RATE_CHECK_DEAL": "2/1",
    "PRESIDENT_RATE_COMMAND": "3/60",
    "PRESIDENT_STREAMS_PER_IDENTITY": str(STREAMS_PER_IDENTITY),
    "PRESIDENT_STREAMS_PER_PEER": str(STREAMS_PER_PEER),
    "PRESIDENT_GATEWAY_MAX_STREAMS_PER_CONNECTION": str(STREAMS_PER_CONNECTION),
    "PRESIDENT_WEB_TRUSTED_PROXIES": "127.0.0.1",  # the tests call the edge as its proxy
}
EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory, nats_url: str) -> Iterator[Stack]:
    """The services and the web edge with small limits."""
    workdir = tmp_path_factory.mktemp("limited")
    env = {**isolated_env(), **LIMITS, "PRESIDENT_WEB_STATIC_DIR": str(workdir)}
    with sqlite_stack_in(workdir, nats_url, env, (*SERVICES, "web")) as stack:
        yield stack


@pytest.fixture
async def player(limited: Stack) -> AsyncIterator[GatewayClient]:
    """A client that raises a rate limit's refusal instead of waiting it out."""
    client = GatewayClient.connect(limited.gateway)
    client.rate_limit_retries = 0
    yield client
    await client.close()


def retry_delay(error: grpc.aio.AioRpcError) -> tuple[str, dict[str, str], float]:
    """The ErrorInfo reason and metadata and the RetryInfo delay of a refusal."""
    details = dict(error.trailing_metadata() or ())["grpc-status-details-bin"]
    status = status_pb2.Status.FromString(details)  # type: ignore[arg-type]
    info, retry = error_details_pb2.ErrorInfo(), error_details_pb2.RetryInfo()
    for detail in status.details:
        if detail.Is(info.DESCRIPTOR):
            detail.Unpack(info)
        elif detail.Is(retry.DESCRIPTOR):
            detail.Unpack(retry)
    return info.reason, dict(info.metadata), retry.retry_delay.ToNanoseconds() / 1e9


async def test_creating_tables_is_limited_per_identity_with_a_retry_hint(
    player: GatewayClient,
) -> None:
    for _ in range(3):
        await player.create_table("classic", visibility="public", display_name="Ann")
    listed = {t.table_id for t in await player.list_tables()}
    stub = gateway_pb2_grpc.GatewayServiceStub(player.channel)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.CreateTable(
            pb.CreateTableRequest(
                options=gpb.TableOptions(preset="classic"), visibility=pb.VISIBILITY_PUBLIC
            ),
            metadata=player.metadata(),
        )
    assert refused.value.code() == EXHAUSTED
    reason, metadata, delay = retry_delay(refused.value)
    assert reason == "RATE_LIMITED" and metadata["limit"] == "create_table"
    assert 0 < delay <= 20 and float(metadata["retry_after_seconds"]) == pytest.approx(delay)
    assert "try again in" in (refused.value.details() or "")
    assert {t.table_id for t in await player.list_tables()} == listed  # none made
    other = player.sibling()  # another account on the same address still may
    other.rate_limit_retries = 0
    await other.create_table("classic", visibility="public", display_name="Bob")


async def test_creating_a_table_needs_an_identity(limited: Stack) -> None:
    async with grpc.aio.insecure_channel(limited.gateway) as channel:
        stub = gateway_pb2_grpc.GatewayServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.CreateTable(
                pb.CreateTableRequest(options=gpb.TableOptions(preset="classic"))
            )
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_guessing_a_password_is_limited_per_account_name(player: GatewayClient) -> None:
    name = f"ada{time.monotonic_ns() % 10**8}"
    await player.register(name, "correct horse battery")
    guesser = player.sibling()
    guesser.rate_limit_retries = 0
    for _ in range(3):  # three guesses a minute at one account
        with pytest.raises(GatewayError) as wrong:
            await guesser.log_in(name, "wrong guess 1234")
        assert wrong.value.code == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(GatewayError) as limited_:
        await guesser.log_in(name, "correct horse battery")  # even the right one, for now
    assert limited_.value.code == EXHAUSTED and limited_.value.reason == "RATE_LIMITED"
    assert limited_.value.retry_after is not None and limited_.value.retry_after > 0
    await guesser.create_guest("Other")  # another kind of call is not held back


def fullwidth(text: str) -> str:
    """``text`` in fullwidth forms (NFKC makes them ASCII again)."""
    return "".join(chr(ord(ch) + 0xFEE0) for ch in text)


def math_bold(text: str) -> str:
    """``text`` in mathematical bold letters and digits (NFKC makes them ASCII again)."""
    return "".join(
        chr(0x1D7CE + ord(ch) - 48) if ch.isdigit() else chr(0x1D41A + ord(ch) - 97) for ch in text
    )


async def test_the_log_in_limit_counts_every_spelling_of_a_name(player: GatewayClient) -> None:
    """The limit is keyed on the players service's own key of the name: a fullwidth, a
    mathematical or an upper-case spelling is the same account and the same bucket."""
    name = f"ada{time.monotonic_ns() % 10**8}"
    await player.register(name, "correct horse battery")
    guesser = player.sibling()
    guesser.rate_limit_retries = 0
    for spelling in (fullwidth(name), math_bold(name), f"  {name.upper()} "):
        with pytest.raises(GatewayError) as wrong:
            await guesser.log_in(spelling, "wrong guess 1234")
        assert (wrong.value.code, wrong.value.reason) == (
            grpc.StatusCode.UNAUTHENTICATED,
            "LOGIN_FAILED",
        )
    with pytest.raises(GatewayError) as limited_:
        await guesser.log_in(fullwidth(name.upper()), "correct horse battery")
    assert limited_.value.code == EXHAUSTED and limited_.value.reason == "RATE_LIMITED"


async def reasons(client: GatewayClient, calls: int) -> list[str]:
    """The refusal reason of each of ``calls`` deal checks (none of them can be answered:
    the round was never played)."""
    out = []
    for _ in range(calls):
        with pytest.raises(GatewayError) as refused:
            await client.check_deal(1, 1)
        out.append(refused.value.reason)
    return out


async def test_the_client_waits_out_the_hint_and_succeeds(player: GatewayClient) -> None:
    await player.create_table("classic", visibility="practice", display_name="Pat")
    started = time.monotonic()
    got = await reasons(player, 3)  # 2 a second: the third is refused
    assert got[2] == "RATE_LIMITED" and "RATE_LIMITED" not in got[:2]
    patient = player.sibling(token=player.token, table_id=player.table_id)
    # The same account, waiting out each refusal as it is told: every call is answered.
    assert "RATE_LIMITED" not in await reasons(patient, 4)
    assert time.monotonic() - started >= 1.0


async def test_commands_on_a_session_count_as_commands(player: GatewayClient) -> None:
    await player.create_table("classic", visibility="practice", display_name="Sam")
    refusals = []
    async with player.session() as session:
        for _ in range(4):  # the game has not started: each play is refused, the 4th for its rate
            with pytest.raises(GatewayError) as refused:
                await session.play(["3C"])
            refusals.append(refused.value)
        with pytest.raises(GatewayError) as unary:  # a call counts against the same bucket
            await player.play(["3C"])
    assert [error.reason == "RATE_LIMITED" for error in refusals] == [False, False, False, True]
    assert refusals[3].code == EXHAUSTED and (refusals[3].retry_after or 0) > 0
    assert unary.value.reason == "RATE_LIMITED"


async def watch(client: GatewayClient) -> AsyncIterator[pb.WatchResponse]:
    """An open Watch stream of the client's table (its snapshot read)."""
    stream = client.watch()
    first = await asyncio.wait_for(anext(stream), 10)
    assert first.snapshot
    return stream


async def refused_stream(client: GatewayClient) -> GatewayError:
    with pytest.raises(GatewayError) as refused:
        await watch(client)
    return refused.value


async def opens_soon(client: GatewayClient) -> AsyncIterator[pb.WatchResponse]:
    """A stream opened once a closed one's slot is free (the gateway sees the close soon)."""
    deadline = time.monotonic() + 5
    while True:
        try:
            return await watch(client)
        except GatewayError as error:
            if error.reason != "TOO_MANY_STREAMS" or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def test_streams_are_limited_per_identity_and_a_closed_one_frees_its_slot(
    player: GatewayClient,
) -> None:
    await player.create_table("classic", visibility="practice", display_name="Ann")
    held = [await watch(player) for _ in range(STREAMS_PER_IDENTITY)]
    refused = await refused_stream(player)
    assert refused.code == EXHAUSTED and refused.reason == "TOO_MANY_STREAMS"
    assert f"{STREAMS_PER_IDENTITY} streams" in refused.message
    await held.pop().aclose()
    held.append(await opens_soon(player))
    for stream in held:
        await stream.aclose()


def own_connection(stack: Stack) -> GatewayClient:
    """A client on a connection of its own (channels of one process share connections to one
    address unless told not to)."""
    options = [("grpc.use_local_subchannel_pool", 1)]
    return GatewayClient(grpc.aio.insecure_channel(stack.gateway, options), owns_channel=True)


async def test_streams_are_limited_per_peer(limited: Stack) -> None:
    clients = [own_connection(limited) for _ in range(STREAMS_PER_PEER // 2 + 2)]
    held = []
    try:
        host = clients[0]
        await host.create_table("classic", visibility="public", display_name="Host")
        for other in clients[1:]:
            await other.spectate(host.table_id)
        slots = iter(client for client in clients for _ in range(STREAMS_PER_IDENTITY))
        for _ in range(STREAMS_PER_PEER):
            held.append(await watch(next(slots)))
        last = clients[-1]  # an identity with no stream yet, on the same address
        refused = await refused_stream(last)
        assert refused.reason == "TOO_MANY_STREAMS" and "from your address" in refused.message
        await held.pop(0).aclose()
        held.append(await opens_soon(last))
    finally:
        for stream in held:
            await stream.aclose()
        for client in clients:
            await client.close()


async def test_one_connection_holds_a_bounded_number_of_streams(limited: Stack) -> None:
    host = GatewayClient.connect(limited.gateway)
    watchers = [host.sibling() for _ in range(STREAMS_PER_CONNECTION)]
    held = []
    try:
        await host.create_table("classic", visibility="public", display_name="Host")
        for other in watchers:
            await other.spectate(host.table_id)
        for other in watchers[:STREAMS_PER_CONNECTION]:
            held.append(await watch(other))
        waiting = asyncio.create_task(watch(host))  # one stream more on the connection
        done, _ = await asyncio.wait({waiting}, timeout=1.5)
        assert not done  # HTTP/2 holds it back (not refused: it waits for a free stream)
        await held.pop().aclose()
        held.append(await asyncio.wait_for(waiting, 10))
    finally:
        for stream in held:
            await stream.aclose()
        await host.close()


async def edge_guest(http: httpx.AsyncClient, browser: str) -> httpx.Response:
    return await http.post(
        f"{SERVICE_PATH}/CreateGuest",
        json={"displayName": "Browser"},
        headers={"content-type": "application/json", "x-forwarded-for": browser},
    )


async def test_behind_the_edge_each_browser_address_has_its_own_limit(limited: Stack) -> None:
    async with httpx.AsyncClient(base_url=f"http://{limited.address('web')}") as http:
        # The bucket refills while the calls run (each new guest takes a while: its device
        # secret is hashed), so the count may pass the burst by what refilled meanwhile.
        started = time.monotonic()
        accepted = 0
        while (refused := await edge_guest(http, "198.51.100.7")).status_code == 200:
            accepted += 1
            refilled = (time.monotonic() - started) * GUESTS_PER_PEER / GUEST_WINDOW_SECONDS
            assert accepted <= GUESTS_PER_PEER + int(refilled) + 1, "the address is not limited"
        assert accepted >= GUESTS_PER_PEER
        assert refused.status_code == 429
        assert refused.json()["code"] == "resource_exhausted"
        assert error_reason(refused.json()) == "RATE_LIMITED"
        assert (await edge_guest(http, "198.51.100.8")).status_code == 200  # another browser
    # A native caller naming that address without the edge's secret is counted as itself.
    async with grpc.aio.insecure_channel(limited.gateway) as channel:
        stub = gateway_pb2_grpc.GatewayServiceStub(channel)
        forged = ((FORWARDED_PEER, "198.51.100.7"), (EDGE_SECRET, "a guess"))
        await stub.CreateGuest(ppb.CreateGuestRequest(display_name="Native"), metadata=forged)
        with pytest.raises(grpc.aio.AioRpcError) as proven:  # with the secret: believed
            proven_metadata = ((FORWARDED_PEER, "198.51.100.7"), (EDGE_SECRET, limited.edge_secret))
            await stub.CreateGuest(
                ppb.CreateGuestRequest(display_name="Native"), metadata=proven_metadata
            )
        assert proven.value.code() == EXHAUSTED
