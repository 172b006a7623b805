"""The players service's store and use cases on real SQLite and PostgreSQL databases."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from president.servicekit.errors import ServiceError
from president.servicekit.identity import AccessTokens
from president.services.players.app import Lifetimes, Players
from president.services.players.store import PlayersStore
from president.store import migrate

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer

PASSWORD = "a long enough passphrase"


@pytest.fixture(params=["sqlite", "postgres"])
def players_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'players.db'}"
        migrate(url)
        yield url
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.create_database("players")
    try:
        migrate(url)
        yield url
    finally:
        server.drop_database(url)


@pytest.fixture
def players(players_url: str) -> Iterator[Players]:
    store = PlayersStore(players_url)
    yield Players(store, AccessTokens("integration"), Lifetimes(access=60, refresh=3600))
    store.close()


def test_accounts_sessions_and_revocations_on_the_database(players: Players) -> None:
    guest = players.create_guest("Ann")
    named = players.register("Ann", PASSWORD, upgrade_token=guest.access_token)
    assert named.identity.account_id == guest.identity.account_id
    with pytest.raises(ServiceError) as taken:
        players.register("ANN", PASSWORD)
    assert taken.value.reason == "NAME_TAKEN"
    other = players.log_in("ann", PASSWORD)
    assert players.log_out_everywhere(other.access_token) == 3
    revoked = {session for session, _until in players.revocations()}
    assert {guest.identity.session_id, named.identity.session_id} <= revoked


def test_one_refresh_token_used_at_once_by_two_wins_once_and_ends_the_session(
    players: Players,
) -> None:
    """Two concurrent uses of one refresh token: the row lock lets exactly one rotate,
    and the other is the reuse that revokes the session."""
    issued = players.register("Bob", PASSWORD)

    def use() -> str:
        try:
            players.refresh(issued.refresh_token)
        except ServiceError as error:
            return error.reason
        return "ROTATED"

    with ThreadPoolExecutor(2) as pool:
        outcomes = sorted(pool.map(lambda _: use(), range(2)))
    assert outcomes == ["REFRESH_TOKEN_REUSED", "ROTATED"]
    with pytest.raises(ServiceError) as after:
        players.who_am_i(issued.access_token)
    assert after.value.reason == "SESSION_REVOKED"
