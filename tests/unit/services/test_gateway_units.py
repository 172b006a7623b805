"""The gateway's parts without processes: input checks, the deal check, the feeds.

The feeds run against a fake of the gateway's own TablePort, backed by a real
TableHost on a real SQLite event store (no mock of a database or of NATS).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from president import codec
from president.events.v1 import events_pb2 as epb
from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.dealer import LocalDealer
from president.hosting.host import TableHost
from president.hosting.streams import stream_id
from president.rules import bots
from president.rules import game as g
from president.rules import round as rnd
from president.rules.cards import parse_cards
from president.rules.options import options_for
from president.servicekit.errors import Code, ServiceError
from president.servicekit.identity import Identity
from president.servicekit.nats import Subjects, envelope
from president.services.gateway.api.handlers import transport_error
from president.services.gateway.api.session import session as session_stream
from president.services.gateway.calls import checks
from president.services.gateway.calls.dealcheck import check_deal
from president.services.gateway.streams import watch as watch_module
from president.services.gateway.streams.fanout import SeatOf
from president.services.gateway.streams.feed import FeedHub
from president.services.gateway.streams.watch import seat_resolver, watch_session
from president.services.gateway.streams.watch import watch as watch_bytes
from president.store import EventStore
from president.table.v1 import table_pb2 as tpb


# --------------------------------------------------------------------------- input checks
@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (lambda: checks.display_name(""), "INVALID_DISPLAY_NAME"),
        (lambda: checks.display_name("   "), "INVALID_DISPLAY_NAME"),
        (lambda: checks.display_name("x" * 41), "INVALID_DISPLAY_NAME"),
        (lambda: checks.display_name("a\nb"), "INVALID_DISPLAY_NAME"),
        (lambda: checks.table_id("no spaces"), "INVALID_TABLE_ID"),
        (lambda: checks.cards([]), "MALFORMED_CARDS"),
        (lambda: checks.cards(["3C"] * 6), "MALFORMED_CARDS"),
        (lambda: checks.cards(["11H"]), "MALFORMED_CARDS"),
        (lambda: checks.cards(["3CCCCCCCC"]), "MALFORMED_CARDS"),
        (lambda: checks.command_id("x" * 101), "INVALID_COMMAND_ID"),
        (lambda: checks.reaction("Thumbs Up"), "INVALID_REACTION"),
        (lambda: checks.reaction("x" * 33), "INVALID_REACTION"),
        (lambda: checks.options(gpb.TableOptions(preset="poker")), "INVALID_OPTIONS"),
        (
            lambda: checks.options(gpb.TableOptions(preset="house", options={"nope": "1"})),
            "INVALID_OPTIONS",
        ),
        (
            lambda: checks.options(
                gpb.TableOptions(preset="house", options={"turn_seconds": "soon"})
            ),
            "INVALID_OPTIONS",
        ),
        (lambda: checks.seat_count(2, options_for("house")), "INVALID_SEAT_COUNT"),
        (lambda: checks.seat_count(9, options_for("classic")), "INVALID_SEAT_COUNT"),
        (lambda: checks.seat_count(3, options_for("club")), "INVALID_SEAT_COUNT"),
        (lambda: checks.round_number(0, 1), "INVALID_ROUND"),
    ],
)
def test_bad_input_is_invalid_argument(call: object, reason: str) -> None:
    with pytest.raises(ServiceError) as raised:
        call()  # type: ignore[operator]
    assert raised.value.status == Code.INVALID_ARGUMENT
    assert raised.value.reason == reason
    assert raised.value.message  # a sentence for a person


def test_good_input_passes() -> None:
    assert checks.display_name("  Ada ") == "Ada"
    assert checks.cards(["10h", "qs"]) == parse_cards(["10H", "QS"])  # the cards named
    assert len(checks.command_id("")) == 32
    assert checks.options(gpb.TableOptions()).preset == "classic"
    assert checks.seat_count(0, options_for("house")) == 4
    assert checks.seat_count(0, options_for("traditional")) == 4
    assert checks.seat_count(8, options_for("traditional")) == 8


# --------------------------------------------------------------------------- the fake table port
class LocalTables:
    """The gateway's TablePort over an in-process TableHost (a fake of our own port)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.host = TableHost(store, LocalDealer())
        self.reads = 0

    async def read_events(
        self, table_id: str, after: int, limit: int = 0
    ) -> list[epb.EventEnvelope]:
        self.reads += 1
        stored = self.store.read_stream(stream_id(table_id), after + 1)
        if not stored and self.store.current_version(stream_id(table_id)) == 0:
            raise ServiceError(Code.NOT_FOUND, "TABLE_NOT_FOUND", "no table")
        return [envelope(event) for event in stored]

    async def create_table(self, request: tpb.CreateTableRequest) -> tpb.CreateTableResponse:
        raise NotImplementedError

    async def submit(self, request: tpb.ExecuteCommandRequest) -> tpb.ExecuteCommandResponse:
        raise NotImplementedError

    async def get_table(self, table_id: str, seat: int | None) -> gpb.TableView:
        raise NotImplementedError

    async def list_tables(self, request: tpb.ListTablesRequest) -> list[tpb.TableSummary]:
        return []

    async def list_commitments(
        self, day: str, after_seq: int, limit: int
    ) -> list[epb.CommitmentEntry]:
        return []


@pytest.fixture
def tables(tmp_path: Path) -> LocalTables:
    return LocalTables(EventStore.from_url(f"sqlite:///{tmp_path / 'events.db'}", migrate=True))


def bot_table(tables: LocalTables, table_id: str = "t1", preset: str = "house") -> None:
    """A table of four seats: a human in seat 0 (player p0), bots elsewhere, started."""
    host = tables.host
    host.create(table_id, options_for(preset), seat_count=4, host_player_id="p0")
    host.decide_and_append(table_id, g.SitDown(0, "p0", False, "Ada"), "sit-0", "p0")
    for seat in range(1, 4):
        host.decide_and_append(table_id, g.SitDown(seat, f"bot-{seat}", True), f"sit-{seat}", "p0")
    host.decide_and_append(table_id, g.StartGame(), "start", "p0")


def human_move(tables: LocalTables, table_id: str) -> tuple[rnd.RoundState, rnd.Command] | None:
    """The round and the move the human of seat 0 makes next, as the engine's bot would."""
    table = tables.host.load(table_id)
    state = table.game.round
    if state is None or table.game.phase != g.GamePhase.ROUND:
        return None
    command = bots.choose_action(state, 0)
    return None if command is None else (state, command)


def play_human(tables: LocalTables, table_id: str, moves: int) -> None:
    """The human of seat 0 plays ``moves`` times as the engine's bot would."""
    for _ in range(moves):
        move = human_move(tables, table_id)
        if move is None:
            return
        at = tables.host.load(table_id).version  # a new id for each move, however many calls
        tables.host.decide_and_append(table_id, move[1], f"human-v{at}", "p0")


# --------------------------------------------------------------------------- the deal check
def test_check_deal_is_refused_before_the_reveal_and_verified_after(tables: LocalTables) -> None:
    bot_table(tables)
    events = asyncio.run(tables.read_events("t1", 0))
    with pytest.raises(ServiceError) as early:
        check_deal(events, 1, 1)
    assert early.value.status == Code.FAILED_PRECONDITION
    assert early.value.reason == "ROUND_NOT_OVER"
    with pytest.raises(ServiceError) as unknown:
        check_deal(events, 1, 9)
    assert unknown.value.status == Code.NOT_FOUND
    play_human(tables, "t1", 200)
    events = asyncio.run(tables.read_events("t1", 0))
    checked = check_deal(events, 1, 1)
    assert checked.verified, checked.problem
    assert len(checked.hands) == 4 and len(checked.secret_hex) == 64
    dealt = {len(hand.cards) for hand in checked.hands}
    assert dealt == {13}


def test_check_deal_finds_a_tampered_log(tables: LocalTables) -> None:
    bot_table(tables)
    play_human(tables, "t1", 200)
    events = asyncio.run(tables.read_events("t1", 0))
    tampered = []
    for item in events:
        copy = epb.EventEnvelope()
        copy.CopyFrom(item)
        if item.type.endswith("RoundStarted"):
            started = epb.RoundStarted.FromString(item.payload)
            started.hands[0].cards[0], started.hands[1].cards[0] = (
                started.hands[1].cards[0],
                started.hands[0].cards[0],
            )
            copy.payload = started.SerializeToString()
        if item.type.endswith("DealRevealed"):
            revealed = epb.DealRevealed.FromString(item.payload)
            revealed.secret_hex = "00" * 32
            copy.payload = revealed.SerializeToString()
        tampered.append(copy)
    checked = check_deal(tampered, 1, 1)
    assert not checked.verified
    assert "fingerprint" in checked.problem


def test_check_deal_says_a_lost_secret_cannot_be_checked(tables: LocalTables) -> None:
    bot_table(tables)
    play_human(tables, "t1", 200)
    events = []
    for item in asyncio.run(tables.read_events("t1", 0)):
        if item.type.endswith("DealRevealed"):  # what the table stores when the dealer lost it
            revealed = epb.DealRevealed.FromString(item.payload)
            lost = epb.DealSecretLost(game_no=revealed.game_no, round_no=revealed.round_no)
            item = epb.EventEnvelope(type=codec.type_name(lost), payload=lost.SerializeToString())
        events.append(item)
    with pytest.raises(ServiceError) as refused:
        check_deal(events, 1, 1)
    assert (refused.value.status, refused.value.reason) == (Code.DATA_LOSS, "SECRET_LOST")
    assert "lost the secret of round 1 of game 1" in refused.value.message


# --------------------------------------------------------------------------- the feeds
async def watch(
    hub: FeedHub, table_id: str, from_version: int, seat_for: SeatOf
) -> AsyncIterator[pb.WatchResponse]:
    """A Watch stream's changes as its client parses them (the stream yields bytes)."""
    stream = watch_bytes(hub, table_id, from_version, seat_for)
    try:
        async for data in stream:
            yield pb.WatchResponse.FromString(data)
    finally:
        await stream.aclose()


async def _collect(stream: object, count: int) -> list[pb.WatchResponse]:
    out: list[pb.WatchResponse] = []
    async for item in stream:  # type: ignore[attr-defined]
        out.append(item)
        if len(out) >= count:
            break
    return out


async def _session_changes(stream: object, count: int) -> list[pb.WatchResponse]:
    """The first ``count`` changes a Session stream sends, out of the messages that carry
    them (several ready together travel in one)."""
    out: list[pb.WatchResponse] = []
    async for data in stream:  # type: ignore[attr-defined]
        out.extend(pb.SessionResponse.FromString(data).changes)
        if len(out) >= count:
            break
    return out


async def test_a_feed_drops_duplicates_and_fills_gaps(tables: LocalTables) -> None:
    bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    start = feed.version
    stream = watch(hub, "t1", 0, seat_resolver("p0"))
    first = await stream.__anext__()
    assert first.snapshot and first.version == start
    play_human(tables, "t1", 3)
    stored = await tables.read_events("t1", start)
    assert len(stored) >= 3
    # NATS delivers the newest first (a gap), then everything twice.
    await feed._received(stored[-1])
    for item in stored + stored:
        await feed._received(item)
    changes = await _collect(stream, len(stored))
    await stream.aclose()
    assert [c.version for c in changes] == [start + i + 1 for i in range(len(stored))]
    assert not any(c.snapshot for c in changes)
    await hub.close()


async def test_a_commands_events_reach_watchers_without_nats_or_a_store_read(
    tables: LocalTables,
) -> None:
    """The events a command's answer carries are shown at once, in order, then never again."""
    bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    start = feed.version
    stream = watch(hub, "t1", 0, seat_resolver("p0"))
    assert (await stream.__anext__()).snapshot
    play_human(tables, "t1", 3)
    committed = await tables.read_events("t1", start)
    reads = tables.reads
    hub.nudge("t1", committed[1].version, committed[1:2])  # ahead of the feed: held back
    assert feed.version == start
    hub.nudge("t1", committed[0].version, committed[:1])  # the gap closes: both shown
    assert feed.version == committed[1].version
    hub.nudge("t1", committed[-1].version, committed)  # again, and the rest
    for item in committed:  # then NATS brings them all once more
        await feed._received(item)
    changes = await _collect(stream, len(committed))
    await stream.aclose()
    assert [c.version for c in changes] == [e.version for e in committed]
    assert tables.reads == reads, "the feed read the store for events it was handed"
    await hub.close()


async def test_a_session_stream_carries_exactly_what_watch_does(tables: LocalTables) -> None:
    """Sessions get each change as the public part's bytes and the seat's own appended:
    parsed, that is exactly the message Watch sends (own cards only, event redacted)."""
    bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    viewers = [seat_resolver("p0"), seat_resolver(None)]  # a player and a spectator
    watched = [watch(hub, "t1", 0, viewer) for viewer in viewers]
    carried = [watch_session(hub, "t1", 0, viewer) for viewer in viewers]

    def parsed(data: bytes) -> pb.WatchResponse:
        (change,) = pb.SessionResponse.FromString(data).changes
        return change

    for plain, session in zip(watched, carried, strict=True):
        framed, watched_first = parsed(await session.__anext__()), await plain.__anext__()
        for first in (framed, watched_first):  # made a millisecond apart, maybe
            first.view.ClearField("server_now_unix_ms")
        assert framed == watched_first  # snapshots
    start = feed.version
    play_human(tables, "t1", 2)
    await feed.catch_up()
    count = feed.version - start
    assert count > 0
    for plain, session in zip(watched, carried, strict=True):
        changes = await asyncio.wait_for(_collect(plain, count), 10)
        shaped = await asyncio.wait_for(_session_changes(session, count), 10)
        await plain.aclose()
        await session.aclose()
        assert shaped == changes  # the same changes, byte for byte apart
    await hub.close()


async def test_a_session_sends_the_changes_ready_together_in_one_message(
    tables: LocalTables,
) -> None:
    """Several changes that arrive at once (one commit's events) leave in one
    SessionResponse, in version order, each exactly as Watch shapes it."""
    bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")

    class Watching:  # the one part of the Gateway a session's changes use
        def watch_session(self, _claims: object, request: pb.WatchRequest) -> object:
            return watch_session(hub, "t1", request.from_version, seat_resolver("p0"))

    no_commands = asyncio.Event()

    async def requests() -> AsyncIterator[pb.SessionRequest]:
        await no_commands.wait()
        yield pb.SessionRequest()

    claims = Identity("p0", "P0", "guest", "s-0", 2**40)
    first = pb.SessionRequest(watch=pb.WatchRequest(from_version=0))
    stream = session_stream(Watching(), claims, first, requests(), transport_error)  # type: ignore[arg-type]
    plain = watch(hub, "t1", 0, seat_resolver("p0"))
    opening = pb.SessionResponse.FromString(await stream.__anext__())
    assert [c.snapshot for c in opening.changes] == [True] and not opening.results
    await plain.__anext__()
    start = feed.version
    play_human(tables, "t1", 3)
    await feed.catch_up()  # the events after start reach the watchers at once
    count = feed.version - start
    assert count > 1
    message = pb.SessionResponse.FromString(await asyncio.wait_for(stream.__anext__(), 10))
    assert list(message.changes) == await asyncio.wait_for(_collect(plain, count), 10)
    assert [c.version for c in message.changes] == list(range(start + 1, feed.version + 1))
    await stream.aclose()
    await plain.aclose()
    await hub.close()


async def test_watch_resumes_from_history_or_with_the_view_now(
    tables: LocalTables, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 30 moves of the human make at least 30 events, however the cards fall (67 to 100 or
    # so): a replay limit of 24 leaves changes before it to resume from.
    monkeypatch.setattr(watch_module, "REPLAY_LIMIT", 24)
    bot_table(tables)
    play_human(tables, "t1", 30)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    feed = await hub.feed("t1")
    end = feed.version
    assert end > watch_module.REPLAY_LIMIT + 3
    for resume_at in (end - 5, end - watch_module.REPLAY_LIMIT):  # replayed from the history
        stream = watch(hub, "t1", resume_at, seat_resolver("p0"))
        got = await _collect(stream, end - resume_at)
        await stream.aclose()
        assert [c.version for c in got] == list(range(resume_at + 1, end + 1))
        assert not any(c.snapshot for c in got)
    for resume_at in (end - watch_module.REPLAY_LIMIT - 1, 3, 1):  # too far back: the view now
        stream = watch(hub, "t1", resume_at, seat_resolver("p0"))
        (got_now,) = await _collect(stream, 1)
        await stream.aclose()
        assert got_now.snapshot and got_now.skipped and got_now.version == end
    feed.history.clear()  # older than the history: the view now, not every state since
    stream = watch(hub, "t1", 2, seat_resolver("p0"))
    (got,) = await _collect(stream, 1)
    await stream.aclose()
    assert got.snapshot and got.skipped and got.version == end
    assert got.view.viewer_seat == 0, "the seat's own view"
    with pytest.raises(ServiceError) as ahead:
        await _collect(watch(hub, "t1", end + 10, seat_resolver("p0")), 1)
    assert ahead.value.reason == "VERSION_AHEAD"
    with pytest.raises(ServiceError) as unknown:
        await hub.feed("nope")
    assert unknown.value.status == Code.NOT_FOUND
    await hub.close()


async def test_watchers_see_only_their_own_cards(tables: LocalTables) -> None:
    bot_table(tables)
    hub = FeedHub(tables, Subjects())  # type: ignore[arg-type]
    await hub.feed("t1")
    seat_stream = watch(hub, "t1", 1, seat_resolver("p0"))
    spectator_stream = watch(hub, "t1", 1, seat_resolver(None))
    feed = await hub.feed("t1")
    count = feed.version - 1
    mine = await _collect(seat_stream, count)
    theirs = await _collect(spectator_stream, count)
    await seat_stream.aclose()
    await spectator_stream.aclose()
    started = next(c for c in mine if c.event.type.endswith("RoundStarted"))
    hands = epb.RoundStarted.FromString(started.event.payload).hands
    assert [bool(hand.cards) for hand in hands] == [True, False, False, False]
    assert started.view.round.hand and started.view.viewer_seat == 0
    seen = next(c for c in theirs if c.event.type.endswith("RoundStarted"))
    assert not any(h.cards for h in epb.RoundStarted.FromString(seen.event.payload).hands)
    assert not seen.view.round.hand and not seen.view.HasField("viewer_seat")
    await hub.close()


async def test_a_command_the_table_service_never_answers_is_unavailable_at_its_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from president.servicekit import command_stream

    monkeypatch.setattr(command_stream, "ANSWER_SECONDS", 0.05)

    class Silent:
        """An ExecuteCommands call that takes every command and answers none."""

        def __init__(self, requests: AsyncIterator[tpb.ExecuteCommandsRequest]) -> None:
            self.taken: list[tpb.ExecuteCommandsRequest] = []
            self._taking = asyncio.create_task(self._take(requests))

        async def _take(self, requests: AsyncIterator[tpb.ExecuteCommandsRequest]) -> None:
            async for message in requests:
                self.taken.append(message)

        def cancel(self) -> bool:
            return self._taking.cancel()

        def __aiter__(self) -> Silent:
            return self

        async def __anext__(self) -> tpb.ExecuteCommandsResponse:
            await asyncio.Event().wait()
            raise StopAsyncIteration

    calls: list[Silent] = []

    def opened(requests: AsyncIterator[tpb.ExecuteCommandsRequest]) -> Silent:
        calls.append(Silent(requests))
        return calls[-1]

    stream = command_stream.CommandStream(opened)
    started = time.monotonic()
    with pytest.raises(ServiceError) as unanswered:
        request = tpb.ExecuteCommandRequest(table_id="t1", command_id="c1")
        await asyncio.wait_for(stream.send(request), 10)  # no deadline: TimeoutError
    assert unanswered.value.reason == "UPSTREAM_UNAVAILABLE"
    assert 0.04 <= time.monotonic() - started < 5
    assert [item.command.command_id for item in calls[0].taken[0].commands] == ["c1"]
    await stream.close()
