"""Tournaments end to end through the gateway, on SQLite and on PostgreSQL.

A tournament is created, listed, entered and withdrawn from, and read with
its entrants and standings; each is the events of its own stream,
``tournament-<id>``, in the tables' event store. Every refusal of
docs/tournaments.md the first capability can meet comes through the gateway
with its status, its stable reason and a sentence, and changes nothing (the
stream's version is the same after). The tournament service restarted (a
SIGTERM, then a kill -9) keeps every tournament and entry. Tournament events
never reach the tables' JetStream subjects.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta

import grpc
import nats
import pytest
from nats.aio.msg import Msg

from president import tournament_codec as codec
from president.client import GatewayClient
from president.servicekit.launcher import Stack
from president.store import EventStore, NewEvent
from president.tournament.commands import SERVER, StartRound
from president.tournament.decide import decide
from president.tournament.draw import fingerprint, new_secret
from president.tournament.state import fold
from president.tournaments.v1 import tournaments_pb2 as tpb
from tests.support.gateway_truth import expect

PASSWORD = "a long enough passphrase"
FAILED = grpc.StatusCode.FAILED_PRECONDITION
DENIED = grpc.StatusCode.PERMISSION_DENIED


def _ms(moment: datetime) -> int:
    return round(moment.timestamp() * 1000)


def settings(**changed: object) -> tpb.TournamentSettings:
    """A Swiss club tournament of 4-seat tables, open now, starting in an hour."""
    now = datetime.now(UTC)
    made = tpb.TournamentSettings(
        name="Friday club",
        preset="club",
        format="swiss",
        rounds=2,
        table_size=4,
        capacity=8,
        opens_at_unix_ms=_ms(now - timedelta(minutes=1)),
        closes_at_unix_ms=_ms(now + timedelta(hours=1)),
        starts_at_unix_ms=_ms(now + timedelta(hours=1)),
    )
    for name, value in changed.items():
        if name == "options":
            made.options.update(value)  # type: ignore[call-overload]
        else:
            setattr(made, name, value)
    return made


@pytest.fixture
def events(stack: Stack) -> Iterator[EventStore]:
    store = EventStore.from_url(stack.database_url)
    yield store
    store.close()


@pytest.fixture
async def host(stack: Stack) -> AsyncIterator[GatewayClient]:
    made = GatewayClient.connect(stack.gateway)
    await made.register(f"host-{uuid.uuid4().hex[:8]}", PASSWORD)
    yield made
    await made.close()


async def named(host: GatewayClient, prefix: str) -> GatewayClient:
    player = host.sibling()
    await player.register(f"{prefix}-{uuid.uuid4().hex[:8]}", PASSWORD)
    return player


async def guest(host: GatewayClient, name: str) -> GatewayClient:
    player = host.sibling()
    await player.create_guest(name)
    return player


def stream_types(store: EventStore, tournament_id: str) -> list[str]:
    return [
        event.type.removeprefix(codec.TYPE_PREFIX)
        for event in store.read_stream(f"tournament-{tournament_id}")
    ]


async def unchanged(
    host: GatewayClient, tournament_id: str, call: object, code: object, reason: str
) -> None:
    """``call`` is refused with ``code`` and ``reason``; the tournament is as it was."""
    before = await host.tournament(tournament_id)
    await expect(call, code, reason)  # type: ignore[arg-type]
    after = await host.tournament(tournament_id)
    assert after == before


# --------------------------------------------------------------------------- the flow
async def test_a_tournament_is_created_listed_entered_and_withdrawn_from(
    host: GatewayClient, events: EventStore
) -> None:
    created = await host.create_tournament(settings(guests_allowed=True))
    tid = created.tournament_id
    assert created.host == host.player_id
    assert (created.status, created.settings.name, created.version) == ("entry", "Friday club", 1)
    ann = await named(host, "ann")
    bob = await guest(host, "Bob")
    entered = await ann.enter_tournament(tid)
    assert [e.account_id for e in entered.entrants] == [ann.player_id]
    entered = await bob.enter_tournament(tid)
    assert [(e.account_id, e.guest) for e in entered.entrants] == [
        (ann.player_id, False),
        (bob.player_id, True),
    ]
    read = await host.tournament(tid)
    assert [s.account_id for s in read.standings] == [ann.player_id, bob.player_id]
    assert [s.rank for s in read.standings] == [1, 2]
    assert read.rounds == []

    listed = await bob.list_tournaments(statuses=("entry",), page_size=200)
    summary = next(t for t in listed.tournaments if t.tournament_id == tid)
    assert (summary.entrants, summary.status, summary.host) == (2, "entry", host.player_id)

    left = await ann.withdraw_tournament(tid)
    assert [e.account_id for e in left.entrants] == [bob.player_id]
    again = await ann.enter_tournament(tid)  # a withdrawn entrant may enter again
    assert [e.account_id for e in again.entrants] == [bob.player_id, ann.player_id]
    assert stream_types(events, tid) == [
        "TournamentCreated",
        "Entered",
        "Entered",
        "EntryWithdrawn",
        "Entered",
    ]
    assert again.version == 5


async def test_the_same_request_id_creates_one_tournament(host: GatewayClient) -> None:
    request_id = uuid.uuid4().hex
    first = await host.create_tournament(settings(), request_id=request_id)
    second = await host.create_tournament(settings(), request_id=request_id)
    assert second.tournament_id == first.tournament_id
    assert second.version == 1


async def test_the_list_pages_newest_first_and_hides_invite_only_ones(
    host: GatewayClient,
) -> None:
    made = [
        (await host.create_tournament(settings(name=f"Cup {n}"))).tournament_id for n in range(3)
    ]
    secret = (await host.create_tournament(settings(invite_only=True))).tournament_id
    stranger = await named(host, "stranger")
    first = await stranger.list_tournaments(page_size=2)
    second = await stranger.list_tournaments(page_size=2, page_token=first.next_page_token)
    seen = [t.tournament_id for t in (*first.tournaments, *second.tournaments)]
    assert seen[:3] == made[::-1]
    assert secret not in seen
    mine = await host.list_tournaments(page_size=1)
    assert [t.tournament_id for t in mine.tournaments] == [secret]
    await expect(
        host.list_tournaments(page_token="not a token"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_PAGE_TOKEN",
    )


# --------------------------------------------------------------------------- refusals
async def test_entering_is_refused_with_the_cores_reasons_and_changes_nothing(
    host: GatewayClient,
) -> None:
    tid = (await host.create_tournament(settings(capacity=2))).tournament_id
    ann, bob, cid = [await named(host, name) for name in ("ann", "bob", "cid")]
    await ann.enter_tournament(tid)
    await unchanged(
        host, tid, ann.enter_tournament(tid), grpc.StatusCode.ALREADY_EXISTS, "ALREADY_ENTERED"
    )
    dan = await guest(host, "Dan")
    await unchanged(host, tid, dan.enter_tournament(tid), DENIED, "GUESTS_NOT_ALLOWED")
    await bob.enter_tournament(tid)
    await unchanged(host, tid, cid.enter_tournament(tid), FAILED, "TOURNAMENT_FULL")
    await unchanged(host, tid, cid.withdraw_tournament(tid), FAILED, "NOT_ENTERED")

    later = settings(opens_at_unix_ms=_ms(datetime.now(UTC) + timedelta(minutes=30)))
    early = (await host.create_tournament(later)).tournament_id
    await unchanged(host, early, ann.enter_tournament(early), FAILED, "NOT_YET_OPEN")

    now = datetime.now(UTC)
    soon = settings(closes_at_unix_ms=_ms(now + timedelta(seconds=2)))
    closing = (await host.create_tournament(soon)).tournament_id
    await asyncio.sleep(
        max(0.0, (now + timedelta(seconds=2.2) - datetime.now(UTC)).total_seconds())
    )
    await unchanged(host, closing, ann.enter_tournament(closing), FAILED, "ENTRY_CLOSED")

    private = (await host.create_tournament(settings(invite_only=True))).tournament_id
    await unchanged(host, private, ann.enter_tournament(private), DENIED, "NOT_INVITED")
    await host.invite_to_tournament(private, (ann.player_id,))
    assert [e.account_id for e in (await ann.enter_tournament(private)).entrants] == [ann.player_id]


async def test_a_started_tournament_refuses_entries_and_withdrawals(
    host: GatewayClient, events: EventStore
) -> None:
    """Started: its first round's draw was committed (as the service's round runner will,
    at or after the start), so entering an elimination and withdrawing are refused."""
    now = datetime.now(UTC)
    starts = now + timedelta(hours=1)
    elimination = settings(
        format="elimination",
        closes_at_unix_ms=_ms(starts),
        starts_at_unix_ms=_ms(starts),
    )
    tid = (await host.create_tournament(elimination)).tournament_id
    ann, bob = await named(host, "ann"), await named(host, "bob")
    await ann.enter_tournament(tid)
    await bob.enter_tournament(tid)
    stream = f"tournament-{tid}"
    stored = events.read_stream(stream)
    state = fold(codec.decode(event.type, event.payload) for event in stored)
    secret = new_secret()
    at_start = starts + timedelta(seconds=1)  # the settings hold whole milliseconds
    committed = decide(state, StartRound(SERVER, 1, fingerprint(secret, tid, 1)), at_start)
    events.append(
        stream,
        len(stored),
        [NewEvent(codec.type_name(e), codec.encode(e), {"actor": SERVER}) for e in committed],
        f"test-start-{tid}",
    )
    read = await host.tournament(tid)
    assert (read.status, [r.fingerprint for r in read.rounds]) == (
        "running",
        [fingerprint(secret, tid, 1)],
    )
    assert read.rounds[0].secret_hex == ""
    cid = await named(host, "cid")
    # Elimination: entries close by the start, so an entry now is refused as after the start.
    await unchanged(host, tid, cid.enter_tournament(tid), FAILED, "TOURNAMENT_STARTED")
    await unchanged(host, tid, ann.withdraw_tournament(tid), FAILED, "TOURNAMENT_STARTED")
    await unchanged(host, tid, host.cancel_tournament(tid), FAILED, "TOURNAMENT_STARTED")


async def test_only_the_host_changes_a_tournament(host: GatewayClient) -> None:
    tid = (await host.create_tournament(settings())).tournament_id
    ann = await named(host, "ann")
    await unchanged(host, tid, ann.cancel_tournament(tid), DENIED, "NOT_HOST")
    await unchanged(host, tid, ann.invite_to_tournament(tid, (ann.player_id,)), DENIED, "NOT_HOST")
    cancelled = await host.cancel_tournament(tid)
    assert cancelled.status == "cancelled"
    await unchanged(host, tid, ann.enter_tournament(tid), FAILED, "TOURNAMENT_OVER")


async def test_bad_input_is_refused_with_a_reason(host: GatewayClient) -> None:
    past = settings(starts_at_unix_ms=_ms(datetime.now(UTC) - timedelta(hours=1)))
    for bad in (
        settings(format="knockout"),
        settings(table_size=9),
        settings(capacity=1),
        settings(rounds=0),
        settings(preset="no-such-preset"),
        past,
    ):
        await expect(host.create_tournament(bad), grpc.StatusCode.INVALID_ARGUMENT, "BAD_SETTINGS")
    for name in (" ", "x" * 41, "bell\a"):
        await expect(
            host.create_tournament(settings(name=name)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_TOURNAMENT_NAME",
        )
    await expect(
        host.create_tournament(settings(options={"jokers": "2" * 101})),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_OPTIONS",
    )
    await expect(host.tournament("no-such-one"), grpc.StatusCode.NOT_FOUND, "NO_SUCH_TOURNAMENT")
    await expect(
        host.enter_tournament("not/an id"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_TOURNAMENT_ID",
    )
    await expect(
        host.list_tournaments(statuses=("paused",)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_STATUS",
    )
    stranger = GatewayClient(host.channel)
    await expect(stranger.list_tournaments(), grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")


# --------------------------------------------------------------------------- persistence
@pytest.mark.parametrize("kill", [False, True], ids=["sigterm", "kill-9"])
async def test_tournaments_and_entries_outlive_the_service(
    kill: bool, stack: Stack, host: GatewayClient
) -> None:
    tid = (await host.create_tournament(settings())).tournament_id
    ann, bob = await named(host, "ann"), await named(host, "bob")
    await ann.enter_tournament(tid)
    await bob.enter_tournament(tid)
    await ann.withdraw_tournament(tid)
    before = await host.tournament(tid)
    stack.stop_one("tournament", kill=kill)
    await expect(host.tournament(tid), grpc.StatusCode.UNAVAILABLE, "UPSTREAM_UNAVAILABLE")
    table = await host.sibling().create_table("club", seat_count=4)  # tables go on meanwhile
    assert table.table_id
    stack.start_one("tournament")
    after = await _retried(lambda: host.tournament(tid))
    assert after == before
    assert [e.account_id for e in after.entrants] == [bob.player_id]
    listed = await host.list_tournaments(page_size=200)
    assert tid in [t.tournament_id for t in listed.tournaments]
    entered = await ann.enter_tournament(tid)
    assert [e.account_id for e in entered.entrants] == [bob.player_id, ann.player_id]


async def _retried(call: object) -> tpb.Tournament:
    """The gateway's channel reconnects to the restarted service within seconds."""
    deadline = time.monotonic() + 15
    while True:
        try:
            return await call()  # type: ignore[operator, no-any-return]
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def test_tournament_events_stay_off_the_tables_subjects(
    stack: Stack, host: GatewayClient
) -> None:
    """The outbox relay publishes tables' streams only: a tournament's events are not
    table events, and the timer and scoring that follow those subjects never see them."""
    prefix = stack.base_env()["PRESIDENT_SUBJECT_PREFIX"]
    client = await nats.connect(stack.nats_url)
    try:
        seen: list[str] = []

        async def heard(message: Msg) -> None:
            seen.append(message.subject)

        await client.subscribe(f"{prefix}.>", cb=heard)
        tid = (await host.create_tournament(settings())).tournament_id
        await (await named(host, "ann")).enter_tournament(tid)
        table = host.sibling()
        await table.create_table("club", seat_count=4)  # a table's events still flow
        deadline = time.monotonic() + 10
        while not any(s.endswith(table.table_id) for s in seen) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert any(s.endswith(table.table_id) for s in seen)
        assert not [s for s in seen if "tournament" in s]
    finally:
        await client.close()
