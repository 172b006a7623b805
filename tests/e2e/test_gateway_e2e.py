"""End to end through the gateway: the six services as processes, on SQLite and on PostgreSQL.

Clients use :mod:`president.client` only; the truth they are checked against
is the stored log. After every test, every table it made verifies with the
auditor's check (:func:`president.audit.verify_table`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator

import grpc
import pytest

from president.client import GatewayClient, GatewayError, SeatLog, choose, play_seat
from president.events.v1 import events_pb2 as epb
from president.gateway.v1 import gateway_pb2 as pb
from president.rules.options import PRESETS
from president.servicekit.launcher import Stack
from president.services.gateway.calls.commands import scoped_command_id
from tests.support.gateway_truth import (
    Store,
    check_stream,
    check_view,
    expect,
    table_of_humans,
    token,
)

GAME_SECONDS = 90
#: Not a speed goal: how long a half-closed Session may hang before the test calls it stuck.
HALF_CLOSE_GUARD_SECONDS = 30
INVALID = grpc.StatusCode.INVALID_ARGUMENT
DENIED = grpc.StatusCode.PERMISSION_DENIED
UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED


@pytest.fixture(scope="module")
def stores() -> Iterator[dict[str, Store]]:
    opened: dict[str, Store] = {}
    yield opened
    for store in opened.values():
        store.close()


@pytest.fixture
def store(stack: Stack, stores: dict[str, Store]) -> Store:
    if stack.database_url not in stores:
        stores[stack.database_url] = Store(stack)
    return stores[stack.database_url]


@pytest.fixture
async def client(stack: Stack, store: Store) -> AsyncIterator[GatewayClient]:
    """A client on its own channel; afterwards every table it touched verifies."""
    made = GatewayClient.connect(stack.gateway)
    made.touched = set()  # type: ignore[attr-defined]
    yield made
    await made.close()
    tables = set(made.touched) | {made.table_id}  # type: ignore[attr-defined]
    store.verify(t for t in tables if t)


async def _watch_until(
    client: GatewayClient, count: int, from_version: int = 0
) -> list[pb.WatchResponse]:
    out: list[pb.WatchResponse] = []
    async for change in client.watch(from_version):
        out.append(change)
        if len(out) >= count:
            break
    return out


# --------------------------------------------------------------------------- whole games
@pytest.mark.parametrize("preset", PRESETS)
async def test_whole_games_of_every_preset_never_leak(
    preset: str, client: GatewayClient, store: Store
) -> None:
    """Three human clients and a bot play a game (ending by the rules after two rounds; in
    club, whose public games are seven rounds, the host ends it after two).

    Each human watches its own stream from version 1 (one of them on a Session
    stream, acting on it too); a spectator and an auditor watch too. Every
    change and every GetTable is checked against the stored log: own cards
    only, no secret before its reveal, versions contiguous with no duplicate.
    CheckDeal is refused before round 1 ends and verifies every round afterwards.
    """
    options = {} if preset == "club" else {"game_end": "rounds:2"}
    if preset == "traditional":
        options["change_seats"] = "true"  # players move between rounds: tokens follow them
    humans = await table_of_humans(client, preset, humans=3, seats=4, options=options)
    table_id = client.table_id
    spectator = client.sibling()
    await spectator.spectate(table_id)
    auditor = client.sibling()
    await auditor.spectate(table_id, auditor=True)
    await client.start()
    await expect(auditor.check_deal(1, 1), grpc.StatusCode.FAILED_PRECONDITION, "ROUND_NOT_OVER")
    views = [await human.get_table() for human in humans]

    async def read_only(watcher: GatewayClient) -> list[pb.WatchResponse]:
        out: list[pb.WatchResponse] = []
        async for change in watcher.watch(1):
            out.append(change)
            if change.view.phase == "game_over":
                return out
        return out

    logs = [SeatLog() for _ in humans]
    plays = [  # the second human watches and acts on one Session stream
        play_seat(
            human,
            log=log,
            from_version=1,
            host_rounds=(2 if preset == "club" else 10) if human is client else None,
            session=human is humans[1],
        )
        for human, log in zip(humans, logs, strict=True)
    ]
    results = await asyncio.wait_for(
        asyncio.gather(*plays, read_only(spectator), read_only(auditor)), GAME_SECONDS
    )
    views += [await human.get_table() for human in humans]
    truth = store.truth(table_id)
    assert truth.tables[truth.version].game.phase == "game_over"
    if preset == "traditional":
        assert any(e.type.endswith("SeatsChanged") for e in truth.events)
    for human, log in zip(humans, logs, strict=True):
        check_stream(log.responses, truth, human.player_id, 1)
        assert log.actions > 0
    for watched in results[len(humans) :]:
        check_stream(watched, truth, None, 1)  # type: ignore[arg-type]
    for human, view in zip(humans + humans, views, strict=True):
        check_view(view, truth, human.player_id)
    await _revealed(store, table_id, 2)
    for round_no in (1, 2):
        checked = await auditor.check_deal(1, round_no)
        assert checked.verified, checked.problem
        assert sum(len(hand.cards) for hand in checked.hands) + len(checked.set_aside) >= 52
    scores = await spectator.get_scores()
    assert scores.rounds_played == 2
    assert [s.total for s in scores.scores] == list(truth.tables[truth.version].game.scores)


async def _revealed(store: Store, table_id: str, rounds: int) -> None:
    """The game's last secret is appended right after its end: wait for it."""
    for _ in range(100):
        if sum(e.type.endswith("DealRevealed") for e in store.events(table_id)) >= rounds:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the last round's secret was never revealed")


async def test_practice_table_with_bots_and_a_reconnect_mid_round(
    client: GatewayClient, store: Store
) -> None:
    """A seat's stream stops mid-round; the seat acts while away; Watch(from) resumes exactly."""
    created = await client.create_table("house", display_name="Ada", visibility="practice")
    view = await client.get_table()
    assert [s.is_bot for s in view.seats] == [False, True, True, True]
    assert view.phase == "lobby"
    await client.start()
    first = await asyncio.wait_for(
        play_seat(client, until=lambda v: v.phase == "round" and v.round.trick_version >= 4),
        GAME_SECONDS,
    )
    last = first.responses[-1].version
    # Away: the client still acts (its seat and timer stay), then resumes from `last`.
    away = await client.get_table()
    if away.round.legal:
        verb, cards = choose(away) or ("pass", [])
        if verb == "play":
            await client.play(cards)
        elif verb == "give":
            await client.return_cards(cards)
        else:
            await client.pass_()
    assert store.version(created.table_id) > last
    second = await asyncio.wait_for(
        play_seat(client, from_version=last, host_rounds=2), GAME_SECONDS
    )
    truth = store.truth(created.table_id)
    start = first.responses[0].version
    assert first.responses[0].snapshot
    check_stream(first.responses + second.responses, truth, client.player_id, start)
    versions = [c.version for c in first.responses[1:] + second.responses]
    assert versions == list(range(start + 1, versions[-1] + 1))
    assert versions[-1] >= truth.version - 1  # the game's end (the secret's reveal may follow)


@pytest.mark.parametrize("session", [False, True], ids=["watch", "session"])
async def test_a_crashed_gateway_is_resumed_from_the_last_version(
    stack: Stack, client: GatewayClient, store: Store, session: bool
) -> None:
    """kill -9 of the gateway mid-game: the bot client watches again from its last version."""
    await client.create_table("house", display_name="Ada", visibility="practice")
    await client.start()
    log = SeatLog()
    playing = asyncio.create_task(play_seat(client, log=log, host_rounds=2, session=session))
    while len(log.responses) < 15 and not playing.done():
        await asyncio.sleep(0.02)
    stack.stop_one("gateway", kill=True)
    await asyncio.to_thread(stack.start_one, "gateway")
    await asyncio.wait_for(playing, GAME_SECONDS)
    assert log.reconnects >= 1
    truth = store.truth(client.table_id)
    check_stream(log.responses, truth, client.player_id, log.responses[0].version)
    # A command the crash cut off was sent again with its id: it ran once, and
    # the game went on without waiting for the turn timer to act for the player.
    assert not log.refused, log.refused
    assert not any(e.type.endswith("TimedOut") for e in truth.events)


async def test_a_retried_command_id_plays_once(client: GatewayClient, store: Store) -> None:
    await client.create_table("house", display_name="Ada")
    await client.start()
    view = await _wait_for_turn(client)
    action = choose(view)
    assert action is not None and action[0] in ("play", "pass")
    if action[0] == "play":
        first = await client.play(action[1], command_id="my-play-1")
        again = await client.play(action[1], command_id="my-play-1")
    else:
        first = await client.pass_(command_id="my-play-1")
        again = await client.pass_(command_id="my-play-1")
    assert first == again
    mine = [
        e.type.rsplit(".", 1)[-1]
        for e in store.events(client.table_id)
        if e.metadata.get("command_id")
        == scoped_command_id(client.player_id, client.table_id, "my-play-1")
    ]
    assert mine and mine.count("CardsPlayed") + mine.count("Passed") == 1, mine


async def test_a_session_answers_each_command_and_refusals_change_nothing(
    stack: Stack, client: GatewayClient, store: Store
) -> None:
    """Commands on a Session stream run as the calls do; a refusal is a result, not the end."""
    humans = await table_of_humans(client, "house", humans=2, seats=4, visibility="private")
    table_id = client.table_id
    spectator = client.sibling()
    await spectator.spectate(table_id)
    await client.start()
    view = await _wait_for_turn_of(humans)
    on_turn = next(h for h in humans if h.seat == view.round.to_act)
    off_turn = next(h for h in humans if h is not on_turn)
    guest = humans[1]
    held = sorted(view.round.hand)
    not_held = next(c for c in ("3C", "3D", "3H", "3S", "4C", "4D") if c not in held)
    before = store.moved(table_id)
    async with (
        on_turn.session(before) as mine,
        off_turn.session() as theirs,
        spectator.session() as watching,
        guest.session() as guests,
    ):
        cases = [
            (mine.play(["11H"]), INVALID, "MALFORMED_CARDS"),
            (mine.play([not_held]), INVALID, "NOT_IN_HAND"),
            (mine.play(held[:1], command_id="x" * 101), INVALID, "INVALID_COMMAND_ID"),
            (theirs.pass_(), grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN"),
            (watching.pass_(), DENIED, "READ_ONLY"),
            (guests.host_action("end_game"), DENIED, "NOT_HOST"),
            (mine.host_action("nonsense"), INVALID, "INVALID_CHOICE"),
        ]  # fmt: skip
        for call, code, reason in cases:
            await expect(call, code, reason)
        assert store.moved(table_id) == before, "a refused command changed the table"
        action = choose(view)  # type: ignore[arg-type]
        assert action is not None
        verb, cards = action

        def send() -> Awaitable[int]:
            if verb == "play":
                return mine.play(cards, command_id="s-1")
            return mine.pass_(command_id="s-1")

        version = await send()
        again = await send()
        assert again == version > before
        seen: list[pb.WatchResponse] = []
        async for change in mine.changes():  # the play arrives on the same stream
            seen.append(change)
            if change.version >= version:
                break
    assert [c.version for c in seen] == list(range(before + 1, version + 1))
    check_stream(seen, store.truth(table_id), on_turn.player_id, before)
    played = [
        e
        for e in store.events(table_id)
        if e.metadata.get("command_id") == scoped_command_id(on_turn.player_id, table_id, "s-1")
    ]
    assert sum(e.type.endswith(("CardsPlayed", "Passed")) for e in played) == 1


async def test_a_session_must_start_with_a_watch_and_a_valid_token(
    stack: Stack, client: GatewayClient
) -> None:
    await client.create_table("house", display_name="Ada")

    async def first_response(
        requests: list[pb.SessionRequest], metadata: tuple[tuple[str, str], ...]
    ) -> object:
        async def sent() -> AsyncIterator[pb.SessionRequest]:
            for request in requests:
                yield request
            await asyncio.sleep(5)

        call = client.stub.Session(sent(), metadata=metadata)
        try:
            async for response in call:
                return response
        except grpc.aio.AioRpcError as error:
            raise GatewayError.of(error) from None
        finally:
            call.cancel()
        return None

    play_first = [pb.SessionRequest(play=pb.PlayRequest(cards=["3C"], table_id=client.table_id))]
    await expect(first_response(play_first, client.metadata()), INVALID, "SESSION_NOT_STARTED")
    watch = [pb.SessionRequest(watch=pb.WatchRequest(table_id=client.table_id))]
    forged = (("authorization", "Bearer forged.token.value"),)
    await expect(first_response(watch, forged), UNAUTHENTICATED, "TOKEN_INVALID")
    first = await first_response(watch, client.metadata())
    assert isinstance(first, pb.SessionResponse) and first.changes[0].snapshot
    async with client.session() as session:
        empty = session._send(pb.SessionRequest(), "")
        await expect(empty, INVALID, "NOT_A_SESSION_COMMAND")


async def test_a_session_the_client_half_closes_ends_after_its_answers(
    client: GatewayClient,
) -> None:
    """A watch and one command, then the client half-closes: the server answers the
    command and finishes the stream with OK (before, it kept watching until cancelled)."""
    await client.create_table("house", display_name="Ada")
    sent = [
        pb.SessionRequest(watch=pb.WatchRequest(table_id=client.table_id)),
        pb.SessionRequest(**{"pass": pb.PassRequest(command_id="half-close-1")}),
    ]
    call = client.stub.Session(iter(sent), metadata=client.metadata())

    async def read_all() -> list[pb.SessionResponse]:
        return [response async for response in call]

    try:
        responses = await asyncio.wait_for(read_all(), HALF_CLOSE_GUARD_SECONDS)
    except TimeoutError:
        raise AssertionError("the half-closed session did not end") from None
    finally:
        call.cancel()
    assert await call.code() == grpc.StatusCode.OK
    results = [result for response in responses for result in response.results]
    assert [result.command_id for result in results] == ["half-close-1"]
    assert results[0].refused.reason  # a pass before the game started is refused
    assert any(change.snapshot for response in responses for change in response.changes)


async def _wait_for_turn(client: GatewayClient) -> pb.GetTableResponse:
    async for change in client.watch():
        if change.view.round.legal and change.view.round.phase == "play":
            return change.view  # type: ignore[return-value]
    raise AssertionError("the stream ended")


# --------------------------------------------------------------------------- the host
async def test_the_host_runs_the_table_from_lobby_to_lobby(
    client: GatewayClient, store: Store
) -> None:
    """Listed while open; bots added and removed; a player removed mid-round; play again."""
    await client.create_table(
        "house",
        options={"game_end": "rounds:1"},
        seat_count=4,
        visibility="public",
        display_name="Host",
    )
    table_id = client.table_id
    listed = {t.table_id: t for t in await client.sibling().list_tables()}
    assert table_id in listed and listed[table_id].seated == 1
    assert listed[table_id].seat_count == 4 and listed[table_id].options.preset == "house"
    bot = await client.add_bot()
    await client.remove_seat(bot)
    assert not (await client.get_table()).seats[bot].occupied
    guest = client.sibling()
    await guest.join(table_id, "Guest", seat=2)
    assert guest.seat == 2
    await expect(
        client.sibling().join(table_id, "Late", seat=2),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SEAT_TAKEN",
    )
    await client.add_bot()
    await client.add_bot()
    assert table_id not in {t.table_id for t in await client.sibling().list_tables()}
    await expect(client.remove_seat(0), grpc.StatusCode.FAILED_PRECONDITION, "OWN_SEAT")
    await client.start()
    await client.remove_seat(2)  # a bot finishes the guest's round
    removed = await expect(guest.pass_(), DENIED, "SEAT_REMOVED")
    assert "Host (the host) removed you" in removed.message
    first = await asyncio.wait_for(play_seat(client), GAME_SECONDS)
    assert first.last_view is not None and first.last_view.phase == "game_over"
    await _revealed(store, table_id, 1)
    await client.host_action("play_again")
    view = await client.get_table()
    assert view.game_no == 2 and not view.seats[2].occupied  # freed when round 1 ended
    second = await asyncio.wait_for(play_seat(client), GAME_SECONDS)
    assert second.last_view is not None and second.last_view.game_no == 2
    await _revealed(store, table_id, 2)
    await client.host_action("back_to_lobby")
    assert (await client.get_table()).phase == "lobby"
    listed = {t.table_id: t for t in await client.sibling().list_tables()}
    assert table_id in listed and listed[table_id].seated == 3
    for _ in range(100):  # scoring follows the stream: it may be a moment behind
        scores = await client.get_scores()
        if len(scores.games) == 2:
            break
        await asyncio.sleep(0.05)
    assert [game.game_no for game in scores.games] == [1, 2]


async def test_replaying_a_create_table_command_id_gets_no_seat(
    client: GatewayClient, store: Store
) -> None:
    """Whoever repeats another's CreateTable command id gets neither the host's seat nor any."""
    command = f"create-{uuid.uuid4().hex}"
    first = await client.create_table("club", display_name="Ada", command_id=command)
    assert first.player_id == client.player_id and not first.token  # tokens name accounts
    thief = client.sibling()
    error = await expect(
        thief.create_table("club", display_name="Eve", command_id=command),
        grpc.StatusCode.ALREADY_EXISTS,
        "TABLE_EXISTS",
    )
    assert first.table_id not in str(error)
    assert thief.table_id != first.table_id
    assert thief.player_id not in {s.player_id for s in (await client.get_table()).seats}
    view = await client.get_table()
    assert [s.is_bot for s in view.seats] == [False, True, True, True]
    assert view.seats[0].display_name == "Ada"
    assert sum(e.type.endswith("SeatTaken") for e in store.events(first.table_id)) == 4
    assert sum(e.type.endswith("TableCreated") for e in store.events(first.table_id)) == 1


# --------------------------------------------------------------------------- rapid mode
async def test_rapid_many_clients_race_one_trick_version(
    client: GatewayClient, store: Store
) -> None:
    """Six seats race on the opening trick version: exactly one play wins, the rest are STALE."""
    humans = await table_of_humans(client, "house-rapid", humans=6, seats=6)
    await client.start()
    views = [await human.get_table() for human in humans]
    assert all(not v.round.HasField("to_act") for v in views)
    trick = views[0].round.trick_version
    before = store.moved(client.table_id)
    calls = []
    for human, view in zip(humans, views, strict=True):
        plays = [list(a.cards) for a in view.round.legal if a.verb == "play"][:2]
        calls += [human.play(cards, trick_version=trick) for cards in plays]
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    accepted = [o for o in outcomes if isinstance(o, int)]
    refused = [o for o in outcomes if isinstance(o, GatewayError)]
    assert len(accepted) == 1, outcomes
    assert len(refused) == len(calls) - 1 >= 10
    assert {(e.code, e.reason) for e in refused} == {(grpc.StatusCode.ABORTED, "STALE")}
    played = [
        e
        for e in store.events(client.table_id)
        if e.version > before and e.type.endswith("CardsPlayed")
    ]
    assert len(played) == 1


# --------------------------------------------------------------------------- timeouts
async def test_the_timer_acts_for_an_idle_disconnected_seat(
    client: GatewayClient, store: Store
) -> None:
    """turn_seconds=1: nobody watches or plays seat 0, yet the server moves for it."""
    await client.create_table("house", options={"turn_seconds": "1"}, display_name="Idle")
    await client.start()
    deadline = asyncio.get_running_loop().time() + 20
    while asyncio.get_running_loop().time() < deadline:
        timed = [
            e
            for e in store.events(client.table_id)
            if e.type.endswith("TimedOut")
            and epb.TimedOut.FromString(e.payload).HasField("seat")
            and epb.TimedOut.FromString(e.payload).seat == 0
        ]
        if len(timed) >= 2:
            break
        await asyncio.sleep(0.25)
    else:
        raise AssertionError("the timer never acted for seat 0")
    view = await client.get_table()
    assert view.seats[0].player_id == client.player_id and not view.seats[0].left


# --------------------------------------------------------------------------- leaving
async def test_leaving_hands_the_seat_to_a_bot_and_the_token_stops(
    client: GatewayClient, store: Store
) -> None:
    humans = await table_of_humans(client, "house", humans=2, seats=4)
    guest = humans[1]
    await client.start()
    await guest.leave()
    view = await client.get_table()
    assert view.seats[guest.seat or 0].left
    before = store.moved(client.table_id)
    await expect(guest.pass_(), DENIED, "SEAT_LEFT")
    await expect(guest.react("wave"), DENIED, "SEAT_LEFT")
    assert store.moved(client.table_id) == before
    await client.react("thumbs_up")
    log = await asyncio.wait_for(play_seat(client, host_rounds=1), GAME_SECONDS)
    assert log.last_view is not None and log.last_view.phase == "game_over"


# --------------------------------------------------------------------------- bad input
async def test_bad_input_gets_the_right_error_and_changes_nothing(
    stack: Stack, client: GatewayClient, store: Store
) -> None:
    humans = await table_of_humans(client, "house", humans=2, seats=4, visibility="private")
    guest = humans[1]
    table_id = client.table_id
    other = client.sibling()
    await other.create_table("house", display_name="Elsewhere")
    client.touched.add(other.table_id)  # type: ignore[attr-defined]
    await client.start()
    view = await _wait_for_turn_of(humans)
    on_turn = next(h for h in humans if h.seat == view.round.to_act)
    off_turn = next(h for h in humans if h is not on_turn)
    held = set(view.round.hand)
    not_held = next(c for c in ("3C", "3D", "3H", "3S", "4C", "4D") if c not in held)
    spectator, auditor = client.sibling(), client.sibling()
    await spectator.spectate(table_id)
    await auditor.spectate(table_id, auditor=True)
    before = store.moved(table_id)

    def as_token(value: str) -> GatewayClient:
        return client.sibling(token=value, table_id=table_id)

    cases = [
        (on_turn.play(["11H"]), INVALID, "MALFORMED_CARDS"),
        (on_turn.play(["3C", "3D", "3H", "3S", "4C", "4D"]), INVALID, "MALFORMED_CARDS"),
        (on_turn.play([]), INVALID, "MALFORMED_CARDS"),
        (on_turn.play([not_held]), INVALID, "NOT_IN_HAND"),
        (
            off_turn.play([next(iter(view.round.hand))]),
            grpc.StatusCode.FAILED_PRECONDITION,
            "NOT_YOUR_TURN",
        ),
        (off_turn.pass_(), grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN"),
        (on_turn.play(sorted(held)[:1], command_id="x" * 101), INVALID, "INVALID_COMMAND_ID"),
        (on_turn.react("Big Smile!"), INVALID, "INVALID_REACTION"),
        (guest.host_action("end_game"), DENIED, "NOT_HOST"),
        (guest.add_bot(seat=0), DENIED, "NOT_HOST"),  # the table service decides
        (guest.remove_seat(0), DENIED, "NOT_HOST"),
        (client.host_action("nonsense"), INVALID, "INVALID_CHOICE"),
        (spectator.play(sorted(held)[:1]), DENIED, "READ_ONLY"),
        (spectator.pass_(), DENIED, "READ_ONLY"),
        (auditor.host_action("end_game"), DENIED, "READ_ONLY"),
        # Anyone may check a finished round's deal; this one is still being played.
        (spectator.check_deal(1, 1), grpc.StatusCode.FAILED_PRECONDITION, "ROUND_NOT_OVER"),
        (auditor.check_deal(1, 7), grpc.StatusCode.NOT_FOUND, "ROUND_NOT_FOUND"),
        (auditor.check_deal(0, 1), INVALID, "INVALID_ROUND"),
        # The host of another table has no seat here: it only watches.
        (other.sibling(token=other.token, table_id=table_id).pass_(), DENIED, "READ_ONLY"),
        (as_token("forged.token.value").pass_(), UNAUTHENTICATED, "TOKEN_INVALID"),
        (
            as_token(token(stack, client.player_id) + "x").pass_(),
            UNAUTHENTICATED,
            "TOKEN_INVALID",
        ),
        (
            as_token(token(stack, on_turn.player_id, age=3600)).pass_(),
            UNAUTHENTICATED,
            "TOKEN_EXPIRED",
        ),
        (client.sibling(table_id=table_id).pass_(), UNAUTHENTICATED, "TOKEN_MISSING"),
        (as_token(token(stack, "g-intruder")).pass_(), DENIED, "READ_ONLY"),
        (as_token(token(stack, "g-x")).start(), DENIED, "READ_ONLY"),
        (as_token(token(stack, "g-y")).react("wave"), DENIED, "READ_ONLY"),
        (
            client.sibling().join("no-such-table", "Bob"),
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        ),
        (client.sibling().join("bad id!", "Bob"), INVALID, "INVALID_TABLE_ID"),
        (client.sibling().join(table_id, "x" * 41), INVALID, "INVALID_DISPLAY_NAME"),
        (client.sibling().spectate("no-such-table"), grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"),
        (client.sibling().create_table("poker", display_name="Bob"), INVALID, "INVALID_OPTIONS"),
        (
            client.sibling().create_table(
                "house", options={"turn_seconds": "-3"}, display_name="Bob"
            ),
            INVALID,
            "INVALID_OPTIONS",
        ),
        (
            client.sibling().create_table("club", seat_count=3, display_name="Bob"),
            INVALID,
            "INVALID_SEAT_COUNT",
        ),
        (client.sibling().create_table("house", display_name=""), INVALID, "INVALID_DISPLAY_NAME"),
        (
            _watch_until(client, 1, from_version=before + 1000),
            grpc.StatusCode.OUT_OF_RANGE,
            "VERSION_AHEAD",
        ),
    ]
    for call, code, reason in cases:
        await expect(call, code, reason)
        assert store.moved(table_id) == before, (code, reason)
    # A stale trick version in a turn-based game loses too.
    stale = view.round.trick_version + 5
    await expect(on_turn.pass_(trick_version=stale), grpc.StatusCode.ABORTED, "STALE")
    # More than the 256 KiB a message may carry.
    huge = on_turn.play(["3C"] * 70_000)
    await expect(huge, grpc.StatusCode.RESOURCE_EXHAUSTED, "")
    assert store.moved(table_id) == before
    # A practice table seats nobody else.
    practice = client.sibling()
    await practice.create_table("house", display_name="Solo")
    client.touched.add(practice.table_id)  # type: ignore[attr-defined]
    await expect(client.sibling().join(practice.table_id, "Bob"), DENIED, "PRACTICE_TABLE")


async def _wait_for_turn_of(humans: list[GatewayClient]) -> pb.GetTableResponse:
    """The view of the human whose turn it is (the bots move by themselves)."""
    for _ in range(200):
        for human in humans:
            view = await human.get_table()
            if view.round.phase == "play" and view.round.to_act == human.seat:
                return view  # type: ignore[return-value]
        await asyncio.sleep(0.05)
    raise AssertionError("no human got the turn")
