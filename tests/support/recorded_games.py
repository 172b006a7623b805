"""Recorded games and an insider who edits the events table with SQL."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sqlalchemy import Engine, delete, insert, select, update

from president import codec
from president.client.receipts import Receipts
from president.gateway.v1 import gateway_pb2 as gpb
from president.hosting.blinding import BLIND, blinding_value
from president.hosting.signatures import Signer
from president.hosting.streams import stream_id
from president.play.recorded import record_bot_game, seeded_host, wait_for_timer
from president.rules import bots
from president.rules import game as g
from president.rules import round as rnd
from president.rules.options import options_for
from president.servicekit.nats import envelope
from president.services.gateway.streams.receipts import receipt
from president.store import GENESIS_HASH, EventStore, StoredEvent, event_hash
from president.store.schema import events

PRESET_PLAYERS = {"classic": 4, "club": 5, "house": 4, "house-rapid": 3, "traditional": 5}


def record(store: EventStore, preset: str, *, seed: int = 1, rounds: int | None = 3) -> str:
    """A bot game of ``preset`` recorded through TableHost; returns the table id.

    ``rounds``: the host ends the game after that many (None: play to the
    rules' end, for presets whose games end by themselves).
    """
    host, clock = seeded_host(store, seed)
    return record_bot_game(
        host, options_for(preset), PRESET_PLAYERS[preset], rounds=rounds, clock=clock
    )


def decoded(store: EventStore, table_id: str) -> list[tuple[StoredEvent, Any]]:
    """The table's stored events with their decoded form."""
    return [
        (event, codec.decode(event.type, event.payload))
        for event in store.read_stream(stream_id(table_id))
    ]


# --------------------------------------------------------------------------- a game with people
def record_with_people(store: EventStore, *, seed: int = 7) -> str:
    """A classic table of five seats, four players, seat 2 empty.

    Seats 0 and 3 are bots; seat 1 (alice) and seat 4 (bob) are people, who
    move by command and sometimes let the timer expire (``TableHost.timeout``).
    Alice leaves in the middle of round 1 (a bot finishes for her); three
    rounds are played, the later ones with an exchange, then the host ends it.
    """
    table_id = f"people-{seed}"
    host, clock = seeded_host(store, seed)
    options = options_for("classic")
    host.create(table_id, options, seat_count=5, host_player_id="bob")
    for seat, player, is_bot in (
        (0, "Bot A", True),
        (1, "alice", False),
        (3, "Bot B", True),
        (4, "bob", False),
    ):
        actor = "bob" if is_bot else player  # the host adds the bots
        host.decide_and_append(
            table_id, g.SitDown(seat, player, is_bot), f"{table_id}/sit-{seat}", actor
        )
    host.decide_and_append(table_id, g.StartGame(), f"{table_id}/start", "bob")
    step = 0
    alice_here = True
    while True:
        step += 1
        table = host.load(table_id)
        game = table.game
        key = f"{table_id}/{table.version}"
        if game.phase == g.GamePhase.BETWEEN_ROUNDS:
            if game.round_no >= 3:
                host.decide_and_append(table_id, g.EndGame(), f"{key}/end", "bob")
            else:
                host.decide_and_append(table_id, g.NextRound(), f"{key}/next", "bob")
            continue
        if game.phase != g.GamePhase.ROUND:
            return table_id
        state = game.round
        assert state is not None
        if alice_here and game.round_no == 1 and state.moves >= 9:
            host.decide_and_append(table_id, g.Leave(1), f"{key}/leave", "alice")
            alice_here = False
            continue
        if step % 4 == 0:
            wait_for_timer(table, clock)
            host.timeout(table_id, state.timer_key, game.game_no, game.round_no)
            continue
        command = _person_move(game, state)
        assert command is not None, "a person must be able to move"
        seat, move = command
        host.decide_and_append(table_id, move, f"{key}/move", game.seats[seat].player or "")


def _person_move(game: g.GameState, state: rnd.RoundState) -> tuple[int, rnd.Command] | None:
    if state.phase == rnd.RoundPhase.EXCHANGE:
        for owed in state.pending:
            if not game.seats[owed.giver].bot_plays:
                cards = bots.choose_return(state, owed.giver, owed.size)
                return owed.giver, rnd.ReturnCards(owed.giver, cards)
        return None
    seat = state.to_act
    move = bots.choose_action(state, seat)
    return (seat, move) if move is not None else None


def record_with_idle_person(
    store: EventStore, preset: str, *, seed: int = 3, rounds: int = 2, idle: str = "play"
) -> str:
    """A table of ``preset``: alice at seat 0, bots elsewhere; alice lets the timer run out.

    ``idle`` is when she does: ``"play"`` (every turn of hers, or in rapid
    mode every trick, times out) or ``"exchange"`` (she plays her turns, but
    never returns cards in the exchange). The host (``host``) starts the
    game, the next rounds and ends it; the timer waits for each deadline.
    """
    table_id = f"idle-{preset}-{idle}-{seed}-{uuid.uuid4().hex[:6]}"  # a store may be shared
    host, clock = seeded_host(store, seed)
    players = PRESET_PLAYERS[preset]
    host.create(table_id, options_for(preset), seat_count=players, host_player_id="host")
    host.decide_and_append(table_id, g.SitDown(0, "alice", False), f"{table_id}/sit-0", "alice")
    for seat in range(1, players):
        command = g.SitDown(seat, f"Bot {seat}", True)
        host.decide_and_append(table_id, command, f"{table_id}/sit-{seat}", "host")
    host.decide_and_append(table_id, g.StartGame(), f"{table_id}/start", "host")
    while True:
        table = host.load(table_id)
        game = table.game
        key = f"{table_id}/{table.version}"
        if game.phase == g.GamePhase.BETWEEN_ROUNDS:
            command = g.EndGame() if game.round_no >= rounds else g.NextRound()
            host.decide_and_append(table_id, command, f"{key}/host", "host")
            continue
        if game.phase != g.GamePhase.ROUND:
            return table_id
        state = game.round
        assert state is not None
        move: rnd.Command | None = None
        if state.phase == rnd.RoundPhase.EXCHANGE and idle != "exchange":
            owed = next((item for item in state.pending if item.giver == 0), None)
            if owed is not None:
                move = rnd.ReturnCards(0, bots.choose_return(state, 0, owed.size))
        elif state.phase == rnd.RoundPhase.PLAY and idle != "play" and state.to_act == 0:
            move = bots.choose_action(state, 0)
        if move is None:
            wait_for_timer(table, clock)
            host.timeout(table_id, state.timer_key, game.game_no, game.round_no)
        else:
            host.decide_and_append(table_id, move, f"{key}/alice", "alice")


# --------------------------------------------------------------------------- the insider
Row = dict[str, Any]
_COLUMNS = tuple(c.name for c in events.c if c.name not in ("id", "tx_id", "stream_id"))
"""The columns an insider writes back: all but the row ids and the stream."""


def rows(engine: Engine, stream: str) -> list[Row]:
    """The stream's rows, as the events table holds them, in version order."""
    query = (
        select(*(events.c[name] for name in _COLUMNS))
        .where(events.c.stream_id == stream)
        .order_by(events.c.version)
    )
    with engine.connect() as connection:
        return [dict(row._mapping) for row in connection.execute(query)]


def set_column(engine: Engine, stream: str, at_version: int, **values: Any) -> None:
    """UPDATE one row, hashes untouched: the careless insider."""
    with engine.begin() as connection:
        connection.execute(
            update(events)
            .where(events.c.stream_id == stream, events.c.version == at_version)
            .values(**values)
        )


def set_message(
    engine: Engine, stream: str, event: StoredEvent, change: Callable[[Any], None]
) -> None:
    """The careless insider changes one event's message in place, hashes untouched."""
    message = codec.parse(event.type, event.payload)
    change(message)
    set_column(engine, stream, event.version, payload=message.SerializeToString())


def delete_version(engine: Engine, stream: str, version: int) -> None:
    """DELETE one row, hashes untouched."""
    with engine.begin() as connection:
        connection.execute(
            delete(events).where(events.c.stream_id == stream, events.c.version == version)
        )


def rewrite(engine: Engine, stream: str, edit: Callable[[list[Row]], list[Row]]) -> None:
    """The careful insider: edit the rows, number them 1..n, recompute every hash, write back."""
    new_rows = edit(rows(engine, stream))
    previous = GENESIS_HASH
    for version, row in enumerate(new_rows, start=1):
        row["version"] = version
        row["previous_hash"] = previous
        row["hash"] = event_hash(
            stream, version, row["type"], row["payload"], json.loads(row["metadata"]), previous
        )
        previous = row["hash"]
    with engine.begin() as connection:
        connection.execute(delete(events).where(events.c.stream_id == stream))
        connection.execute(insert(events), [{"stream_id": stream, **row} for row in new_rows])


def rewrite_message(
    engine: Engine, stream: str, version: int, change: Callable[[Any], None]
) -> None:
    """The careful insider changes one event's message in place, then recomputes every hash."""

    def edit(stored: list[Row]) -> list[Row]:
        row = stored[version - 1]
        message = message_of(row)
        change(message)
        stored[version - 1] = with_message(row, message)
        return stored

    rewrite(engine, stream, edit)


def rewrite_without(engine: Engine, stream: str, version: int) -> None:
    """The careful insider drops one event, then renumbers and recomputes every hash."""
    rewrite(engine, stream, lambda stored: stored[: version - 1] + stored[version:])


FORGED_TIME = "2026-11-30T12:00:00+00:00"
"""The time of a forged event, unless told: later than any recorded game's."""


def forged_row(message: Any, command_id: str, actor: str = "bot:0", time: str = FORGED_TIME) -> Row:
    """A well-formed stored event of a message, as its own command (hashes set by rewrite),
    with a blinding value as the table service writes one."""
    metadata = {"actor": actor, "command_id": command_id, "time": time, BLIND: blinding_value()}
    return {
        "version": 0,
        "type": codec.type_name(message),
        "payload": message.SerializeToString(deterministic=True),
        "metadata": json.dumps(metadata, sort_keys=True, separators=(",", ":")),
        "command_id": command_id,
        "command_seq": 0,
        "hash": "",
        "previous_hash": "",
    }


def message_of(row: Row) -> Any:
    """The protobuf message of a row."""
    return codec.parse(row["type"], row["payload"])


def with_message(row: Row, message: Any) -> Row:
    """The row with another payload."""
    return {**row, "payload": message.SerializeToString(deterministic=True)}


def rechain(stored: list[StoredEvent]) -> list[StoredEvent]:
    """The events numbered 1..n with every hash recomputed, in memory (the careful insider)."""
    out: list[StoredEvent] = []
    previous = GENESIS_HASH
    for version, event in enumerate(stored, start=1):
        digest = event_hash(
            event.stream_id, version, event.type, event.payload, event.metadata, previous
        )
        out.append(replace(event, version=version, previous_hash=previous, hash=digest))
        previous = digest
    return out


def rewrite_metadata(
    engine: Engine,
    stream: str,
    versions: range | list[int],
    change: Callable[[Row, dict[str, Any]], None],
) -> None:
    """The careful insider changes the metadata of some events, then recomputes every hash."""

    def edit(stored: list[Row]) -> list[Row]:
        for version in versions:
            row = stored[version - 1]
            metadata = json.loads(row["metadata"])
            change(row, metadata)
            row["metadata"] = json.dumps(metadata, sort_keys=True, separators=(",", ":"))
        return stored

    rewrite(engine, stream, edit)


def kept_receipts(
    table_id: str,
    holder: str,
    events: list[StoredEvent],
    versions: range | None = None,
    signer: Signer | None = None,
) -> Receipts:
    """What a client keeps of the changes it was sent: the receipt of each event (of
    ``versions``, if given), as the gateway puts it on a ``WatchResponse`` from the table
    service's envelope (signed by ``signer``, the operator's key, when given)."""
    kept = Receipts(table_id, holder)
    for event in events:
        if versions is None or event.version in versions:
            kept.keep(receipt(gpb.WatchResponse(version=event.version), envelope(event, signer)))
    return kept
