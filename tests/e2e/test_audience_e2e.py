"""Audiences end to end: the six services, an audience replica
(``PRESIDENT_GATEWAY_ROLE=audience``) and a NATS server of this module's own (to restart).

Spectators watch at the audience replica and at the players' gateway; every
change they get is checked against the stored log (no card of a seat, no
secret before its reveal); a resume gives no gap and no duplicate (from long
past: the view now, marked skipped); a spectator that never reads holds no
seat back and is skipped to the newest view when it reads again; the
audience replica refuses table commands, and its spectators go on after the
replica or NATS restarts.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest

from president.client import GatewayClient, GatewayError, play_seat
from president.gateway.v1 import gateway_pb2 as pb
from president.gateway.v1 import gateway_pb2_grpc
from president.servicekit.launcher import NatsServer, Stack
from tests.support.audiences import (
    GAME_SECONDS,
    INBOX,
    REPLAY_LIMIT,
    ROUNDS,
    check_resumes,
    check_watched,
    practice,
    spectator,
    until_over,
    watch_through_restarts,
)
from tests.support.gateway_truth import Store, expect


# --------------------------------------------------------------------------- the tier
async def test_spectators_at_the_audience_replica_see_what_the_players_gateway_shows(
    audience_stack: Stack, audience_store: Store
) -> None:
    """A whole game watched at both doors: the same changes apart from the server's clock,
    none with a card of any seat; the audience replica refuses a play."""
    host = await practice(audience_stack)
    table_id = host.table_id
    tier = await spectator(audience_stack.address("audience"), table_id)
    door = await spectator(audience_stack.gateway, table_id)
    try:
        await expect(tier.play(["3C"]), grpc.StatusCode.FAILED_PRECONDITION, "AUDIENCE_REPLICA")
        watched = await asyncio.wait_for(
            asyncio.gather(
                until_over(tier.watch(1)),
                until_over(door.watch(1)),
                play_seat(host, host_rounds=ROUNDS),
            ),
            GAME_SECONDS,
        )
        at_tier, at_door, log = watched
        assert log.last_view is not None and log.last_view.phase == "game_over"
        truth = audience_store.truth(table_id)
        for changes in (at_tier, at_door):
            check_watched(changes, truth, 1)
            assert changes[-1].view.phase == "game_over"
        by_version = {c.version: c for c in at_door if not c.snapshot}
        shared = [c for c in at_tier if c.version in by_version and not c.snapshot]
        assert len(shared) > 50
        for change in shared:  # each replica's clock is its own: "now" differs
            other = by_version[change.version]
            for made in (change, other):
                made.view.ClearField("server_now_unix_ms")
            assert change == other
    finally:
        for client in (host, tier, door):
            await client.close()


async def test_the_audience_replica_refuses_seats_and_sessions(audience_stack: Stack) -> None:
    """Table commands belong to the players' gateway: an audience replica refuses them, with
    a reason, and changes nothing."""
    host = await practice(audience_stack)
    tier = GatewayClient.connect(audience_stack.address("audience"))
    try:
        await tier.create_guest("Watcher")
        await expect(
            tier.create_table("house", display_name="Nope"),
            grpc.StatusCode.FAILED_PRECONDITION,
            "AUDIENCE_REPLICA",
        )
        await expect(
            tier.join(host.table_id, "Nope"),
            grpc.StatusCode.FAILED_PRECONDITION,
            "AUDIENCE_REPLICA",
        )
        seen: list[tuple[grpc.StatusCode, str]] = []
        for _attempt in range(3):  # a transport hiccup (no reason at all) is not the refusal
            session = tier.sibling(token=tier.token, table_id=host.table_id).session()
            with pytest.raises(GatewayError) as refused:
                async for _change in session.changes():
                    break
            await session.close()
            seen.append((refused.value.code, refused.value.reason))
            if refused.value.reason or refused.value.code != grpc.StatusCode.UNAVAILABLE:
                break
        assert seen[-1] == (grpc.StatusCode.FAILED_PRECONDITION, "AUDIENCE_REPLICA"), seen
        assert (await tier.spectate(host.table_id)) == tier.token  # watching is fine
    finally:
        await host.close()
        await tier.close()


# --------------------------------------------------------------------------- slow and resumed
async def test_a_spectator_that_never_reads_holds_no_seat_back_and_then_skips_ahead(
    audience_stack: Stack, audience_store: Store
) -> None:
    """Spectators at the players' gateway open Watch streams and never read while a game is
    played to its end there: the seat plays it all (nobody waits for them); read at last,
    each stream gets what fitted in its inbox, then the newest view as a snapshot marked
    skipped, with no card of any seat; the game had more changes than an inbox holds."""
    host = await practice(audience_stack)
    table_id = host.table_id
    # Flow control at HTTP/2's first window, not grown by the library (BDP probing): a
    # stream that never reads holds only so much in the transport.
    channel = grpc.aio.insecure_channel(
        audience_stack.gateway, options=[("grpc.http2.bdp_probe", 0)]
    )
    stuck = GatewayClient(channel, owns_channel=True)
    await stuck.spectate(table_id)
    stub = gateway_pb2_grpc.GatewayServiceStub(stuck.channel)
    calls = [
        stub.Watch(pb.WatchRequest(table_id=table_id), metadata=stuck.metadata()) for _ in range(5)
    ]
    try:
        log = await asyncio.wait_for(play_seat(host, host_rounds=ROUNDS), GAME_SECONDS)
        assert log.last_view is not None and log.last_view.phase == "game_over"
        final = audience_store.version(table_id)
        assert final > INBOX * 3, "too short a game to overflow an inbox"
        streams = []
        for call in calls:
            first = await call.read()
            assert first.snapshot and not first.skipped
            got = [first]
            while got[-1].version < final:
                got.append(await asyncio.wait_for(call.read(), 10))
            streams.append(got)
        truth = audience_store.truth(table_id)
        for got in streams:
            check_watched(got, truth, got[0].version)
            assert any(c.skipped for c in got), "a stream that never read got every change"
            assert len(got) < final - first.version
    finally:
        for call in calls:
            call.cancel()
        await host.close()
        await stuck.close()


async def test_a_resumed_spectator_gets_no_gap_and_no_duplicate(
    audience_stack: Stack, audience_store: Store
) -> None:
    """Resumed at the audience replica from a recent version: every change after it, once;
    from long past (version 1): the view now, marked skipped, then what follows."""
    host = await practice(audience_stack)
    tier = await spectator(audience_stack.address("audience"), host.table_id)
    try:
        await check_resumes(audience_store, host, tier.watch, REPLAY_LIMIT // 2)
    finally:
        await host.close()
        await tier.close()


# --------------------------------------------------------------------------- restarts
async def test_spectators_go_on_when_the_audience_replica_and_nats_restart(
    audience_stack: Stack, audience_store: Store, audience_nats: NatsServer
) -> None:
    """The audience replica is stopped and started again, then NATS is: its spectator
    resumes from its last version each time and sees the game to its end, no gap, no
    duplicate, no leak."""
    host = await practice(audience_stack)
    tier = await spectator(audience_stack.address("audience"), host.table_id)
    try:
        watched = await watch_through_restarts(
            audience_stack, audience_store, audience_nats, host, tier.watch
        )
        assert watched.opened >= 2, "the replica's restart ended the stream: it resumed"
    finally:
        await host.close()
        await tier.close()
