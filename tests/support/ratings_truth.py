"""What ratings the stored log says: every round's finishing order folded here, in the order
the rounds ended (the tests' truth for scoring's ratings read models); and the end-to-end
tests' reads of scoring's ratings tables and the gateway's ratings calls."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from sqlalchemy import create_engine, delete, func, select

from president import codec
from president.client import GatewayClient, GatewayError
from president.events.v1 import events_pb2 as pb
from president.ratings.accounts import rating_account
from president.ratings.skill import Skill, rate_round
from president.rules import game as g
from president.rules import round as rnd
from president.servicekit.launcher import Stack
from president.services.scoring import ratings_schema
from president.services.scoring.ratings_writes import instant
from president.services.scoring.store import metadata as scoring_metadata
from president.services.scoring.store import scoring_progress
from president.store.schema import events as stored_events

T = TypeVar("T")


def finishing_orders(envelopes: Iterable[pb.EventEnvelope]) -> list[tuple[str, list[str]]]:
    """Each round's ordering key and its accounts in finishing order, oldest round first."""
    rounds: list[tuple[str, list[str]]] = []
    seated: dict[str, dict[int, str]] = {}
    for item in envelopes:
        event = codec.decode(item.type, item.payload)
        seats = seated.setdefault(item.stream_id, {})
        if isinstance(event, g.SeatTaken):
            seats[event.seat] = event.player
        elif isinstance(event, g.SeatsChanged):
            seated[item.stream_id] = {
                new: seats[old] for new, old in enumerate(event.moved_from) if old in seats
            }
        elif isinstance(event, rnd.RoundEnded):
            key = f"{instant(item.time)}|{item.stream_id}|{item.version:012d}"
            rounds.append((key, [rating_account(seats[seat]) for seat in event.standings]))
    return sorted(rounds)


def expected_skills(envelopes: Iterable[pb.EventEnvelope]) -> dict[str, Skill]:
    """Every account's skill after folding every round of ``envelopes``."""
    skills: dict[str, Skill] = {}
    for _, finishing in finishing_orders(envelopes):
        skills.update(rate_round(skills, finishing))
    return skills


async def eventually(probe: Callable[[], Awaitable[T | None]], what: str, seconds: float = 30) -> T:
    deadline = time.monotonic() + seconds
    while True:
        try:
            found = await probe()
        except GatewayError as error:
            if error.reason not in ("ACCOUNT_NOT_FOUND", "UPSTREAM_UNAVAILABLE"):
                raise  # not yet seen by scoring, or scoring restarting: ask again
            found = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


def scoring_url(stack: Stack) -> str:
    return stack.base_env()["PRESIDENT_SCORING_DATABASE_URL"]


async def scoring_caught_up(stack: Stack) -> bool:
    """Whether scoring has applied every stored event of every table.

    A message scoring fetched and did not acknowledge before a ``kill -9`` comes back only
    after JetStream's ack wait (30 s): a table with no later event (nothing to show the gap)
    is behind until then."""

    def behind() -> bool:
        store, scoring = create_engine(stack.database_url), create_engine(scoring_url(stack))
        try:
            with store.connect() as connection:
                stored = dict(
                    connection.execute(
                        select(stored_events.c.stream_id, func.max(stored_events.c.version))
                        .where(stored_events.c.stream_id.like("table-%"))
                        .group_by(stored_events.c.stream_id)
                    ).all()
                )
            with scoring.connect() as connection:
                applied = dict(
                    connection.execute(
                        select(scoring_progress.c.stream_id, scoring_progress.c.version)
                    ).all()
                )
        finally:
            store.dispose()
            scoring.dispose()
        return any(applied.get(stream, 0) < version for stream, version in stored.items())

    return not await asyncio.to_thread(behind)


def ratings_rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table.name: [
                    tuple(row)
                    for row in connection.execute(
                        select(table).order_by(*table.primary_key.columns)
                    )
                ]
                for table in ratings_schema.ALL
            }
    finally:
        engine.dispose()


def drop_read_models(url: str) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            for table in [*ratings_schema.ALL, *reversed(scoring_metadata.sorted_tables)]:
                connection.execute(delete(table))
    finally:
        engine.dispose()


async def rated(client: GatewayClient, rounds: int) -> Any:
    found = await client.ratings(preset="house")
    rating = found.ratings[0]
    return rating if rating.rounds >= rounds else None


async def history_with(client: GatewayClient, games: int) -> Any:
    found = (await client.history()).history
    return found if found.total_games >= games else None
