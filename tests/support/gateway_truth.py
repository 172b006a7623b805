"""Helpers of the gateway's end-to-end tests: the stored truth, leak checks, tokens, audits.

Everything a test learns about a table's truth comes from the real event
store the stack writes (SQLite file or PostgreSQL database); clients only
ever talk to the gateway through :mod:`president.client`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import grpc

from president import codec
from president.audit import verify_table
from president.client import GatewayClient, GatewayError
from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.projection import Table, fold_next
from president.hosting.seat_views import seat_of
from president.hosting.streams import stream_id
from president.rules.cards import mask_of
from president.servicekit.identity import AccessTokens, Identity
from president.servicekit.launcher import Stack
from president.store import EventStore, StoredEvent


@dataclass
class Truth:
    """A table's stored log folded version by version: who holds what, and the secrets."""

    events: list[StoredEvent]
    tables: dict[int, Table] = field(default_factory=dict)
    #: Each round's secret and the version that revealed it.
    reveals: list[tuple[str, int]] = field(default_factory=list)

    @classmethod
    def of(cls, events: list[StoredEvent]) -> Truth:
        truth = cls(events)
        table: Table | None = None
        for stored in events:
            message = codec.parse(stored.type, stored.payload)
            table = fold_next(table, codec.from_message(message), stored)
            truth.tables[stored.version] = table
            if isinstance(message, epb.DealRevealed):
                truth.reveals.append((message.secret_hex, stored.version))
        return truth

    @property
    def version(self) -> int:
        return self.events[-1].version if self.events else 0

    def hand(self, version: int, seat: int | None) -> int:
        """The seat's cards at a version (a mask; 0 for none)."""
        state = self.tables[version].game.round
        if seat is None or state is None or seat >= state.seat_count:
            return 0
        return state.hands[seat]

    def seat(self, version: int, player_id: str | None) -> int | None:
        if player_id is None:
            return None
        return seat_of(self.tables[version].game, player_id)


class Store:
    """The stack's event store, read by the tests."""

    def __init__(self, stack: Stack) -> None:
        self.store = EventStore.from_url(stack.database_url)

    def close(self) -> None:
        self.store.close()

    def events(self, table_id: str) -> list[StoredEvent]:
        return self.store.read_stream(stream_id(table_id))

    def version(self, table_id: str) -> int:
        return self.store.current_version(stream_id(table_id))

    def moved(self, table_id: str) -> int:
        """The version of the table's last change other than a presence report (a stream
        opening or closing is one): what "a refused command changed nothing" compares."""
        return max(
            (e.version for e in self.events(table_id) if not e.type.endswith(".SeatPresence")),
            default=0,
        )

    def truth(self, table_id: str) -> Truth:
        return Truth.of(self.events(table_id))

    def verify(self, table_ids: Iterable[str], settle: float = 5.0) -> None:
        """Every table's log verifies with the auditor's check.

        A live table reveals a round's secret just after the round (and maybe the game)
        ended, which a client may see first: a log that does not verify is read again for
        up to ``settle`` seconds (a wrong log stays wrong, and still fails)."""
        for table_id in table_ids:
            deadline = time.monotonic() + settle
            while True:
                events = self.events(table_id)
                if not events:
                    break
                report = verify_table(events)
                if report.ok or time.monotonic() > deadline:
                    assert report.ok, f"table {table_id}: {report.problem}"
                    break
                time.sleep(0.1)


def check_view(view: gpb.TableView, truth: Truth, player_id: str | None) -> None:
    """A view holds the viewer's own cards at its version and nobody else's."""
    seat = truth.seat(view.version, player_id)
    shown = mask_of(list(view.round.hand)) if view.HasField("round") else 0
    assert shown == truth.hand(view.version, seat), (
        f"v{view.version}: the view of seat {seat} shows {list(view.round.hand)}"
    )
    if seat is None:
        assert not view.round.hand and not view.HasField("viewer_seat")


def check_change(change: pb.WatchResponse, truth: Truth, player_id: str | None) -> None:
    """One watched change: the view and the event show no other seat's cards, no early secret."""
    check_view(change.view, truth, player_id)
    seat = truth.seat(change.version, player_id)
    if change.HasField("event"):
        envelope = change.event
        assert envelope.version == change.version
        message = codec.parse(envelope.type, envelope.payload)
        if isinstance(message, epb.RoundStarted):
            for hand in message.hands:
                assert hand.seat == seat or not hand.cards, (
                    f"v{change.version}: seat {seat} received the hand of seat {hand.seat}"
                )
            assert not message.set_aside
        if isinstance(message, epb.CardsGiven) and seat not in (message.giver, message.receiver):
            assert not message.cards, f"v{change.version}: seat {seat} saw an exchange's cards"
    raw = change.SerializeToString()
    for secret_hex, revealed_at in truth.reveals:
        if change.version < revealed_at:
            assert secret_hex.encode() not in raw and bytes.fromhex(secret_hex) not in raw, (
                f"v{change.version}: a secret revealed only at v{revealed_at} was sent"
            )


def check_stream(
    changes: list[pb.WatchResponse], truth: Truth, player_id: str | None, start: int
) -> None:
    """Contiguous versions after ``start``, each exactly once, each free of leaks."""
    versions = [c.version for c in changes if not c.snapshot]
    assert versions == list(range(start + 1, start + 1 + len(versions))), versions[:20]
    for change in changes:
        check_change(change, truth, player_id)


def token(stack: Stack, account_id: str, age: float = 0, session_id: str = "s-made-up") -> str:
    """An access token for ``account_id`` signed with the stack's secret, as the players
    service signs them (issued ``age`` seconds ago, living 60 s: expired when large)."""
    secret = stack.env["PRESIDENT_TOKEN_SECRET"]
    issued = time.time() - age
    identity = Identity(account_id, "Made up", "guest", session_id, int(issued) + 60)
    return AccessTokens(secret, clock=lambda: issued).issue(identity)


async def refused(call: object) -> GatewayError:
    """The GatewayError a call raised (it must raise one)."""
    try:
        await call  # type: ignore[misc]
    except GatewayError as error:
        return error
    raise AssertionError("the call was accepted")


async def expect(call: object, code: grpc.StatusCode, reason: str) -> GatewayError:
    """The call is refused with this status code and ErrorInfo reason, and a sentence."""
    error = await refused(call)
    assert (error.code, error.reason) == (code, reason), error
    if code != grpc.StatusCode.RESOURCE_EXHAUSTED:
        assert len(error.message) > 10, error
    return error


async def table_of_humans(
    client: GatewayClient,
    preset: str,
    humans: int,
    seats: int,
    options: dict[str, str] | None = None,
    visibility: str = "public",
) -> list[GatewayClient]:
    """A table with ``humans`` clients (the first is the host) and bots in the other seats."""
    created = await client.create_table(
        preset,
        options=options,
        seat_count=seats,
        visibility=visibility,
        display_name="Host",
    )
    players = [client]
    for index in range(1, humans):
        other = client.sibling()
        await other.join(created.table_id, f"Player {index}")
        players.append(other)
    for _ in range(seats - humans):
        await client.add_bot()
    return players
