"""The players use cases on a real SQLite file: names, hashing, rotation, reuse, revocation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import insert, select

from president.servicekit.errors import Code, ServiceError
from president.servicekit.identity import AccessTokens
from president.services.players import hashing, names
from president.services.players.app import Lifetimes, Players
from president.services.players.store import PlayersStore, accounts
from president.store import create_store_engine, migrate

PASSWORD = "correct horse battery"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'players.db'}"
    migrate(url)
    return url


@pytest.fixture
def revoked() -> list[tuple[list[str], int]]:
    return []


@pytest.fixture
def players(url: str, clock: Clock, revoked: list[tuple[list[str], int]]) -> Iterator[Players]:
    store = PlayersStore(url)
    yield Players(
        store,
        AccessTokens("unit-secret", clock),
        Lifetimes(access=60, refresh=3600),
        clock=clock,
        on_revoked=lambda ids, until: revoked.append((ids, until)),
    )
    store.close()


def _rows(url: str, table: object) -> list[object]:
    engine = create_store_engine(url)
    try:
        with engine.connect() as connection:
            return list(connection.execute(select(table)).all())  # type: ignore[call-overload]
    finally:
        engine.dispose()


def test_a_guest_is_created_in_one_call_and_logs_in_again_with_its_device_secret(
    players: Players, url: str
) -> None:
    guest = players.create_guest("Ann")
    assert guest.identity.kind == "guest" and guest.identity.display_name == "Ann"
    assert guest.device_secret and guest.access_token and guest.refresh_token

    again = players.log_in_guest(guest.identity.account_id, guest.device_secret)

    assert again.identity.account_id == guest.identity.account_id
    assert again.identity.session_id != guest.identity.session_id
    stored = _rows(url, accounts)[0]
    assert guest.device_secret not in str(tuple(stored))  # only its hash is kept
    with pytest.raises(ServiceError) as wrong:
        players.log_in_guest(guest.identity.account_id, "not-the-secret")
    assert wrong.value.reason == "LOGIN_FAILED"
    assert wrong.value.status == Code.UNAUTHENTICATED


def test_a_password_is_stored_as_an_argon2id_hash_only(players: Players, url: str) -> None:
    players.register("Ann", PASSWORD)

    (row,) = _rows(url, accounts)
    assert row.password_hash.startswith("$argon2id$")  # type: ignore[attr-defined]
    assert PASSWORD not in str(tuple(row))  # type: ignore[arg-type]


def test_wrong_password_and_unknown_name_are_the_same_refusal(players: Players) -> None:
    players.register("Ann", PASSWORD)
    reasons = []
    for name, password in (("Ann", "wrong password!"), ("Nobody", PASSWORD), ("x", PASSWORD)):
        with pytest.raises(ServiceError) as error:
            players.log_in(name, password)
        assert error.value.status == Code.UNAUTHENTICATED
        reasons.append((error.value.reason, error.value.message))
    assert len(set(reasons)) == 1 and reasons[0][0] == "LOGIN_FAILED"
    assert players.log_in("ANN", PASSWORD).identity.kind == "named"  # names ignore case


class CountingPasswords(hashing.Argon2Passwords):
    """The real argon2id port, counting its verifications and what each checked against."""

    def __init__(self) -> None:
        self.checked: list[str | None] = []

    def matches(self, stored: str | None, password: str) -> bool:
        self.checked.append(stored)
        return super().matches(stored, password)


def test_an_unknown_name_costs_the_same_verification_as_a_wrong_password(
    url: str, clock: Clock
) -> None:
    """No timed assertion: each failed log in runs exactly one argon2 verification, an
    unknown name against the dummy hash (tests/benchmarks/identity_bench.py prints times)."""
    passwords = CountingPasswords()
    store = PlayersStore(url)
    players = Players(store, AccessTokens("unit-secret", clock), clock=clock, passwords=passwords)
    try:
        players.register("Ann", PASSWORD)
        for name, password in (("Ann", "wrong password!"), ("Nobody", PASSWORD), ("x", PASSWORD)):
            passwords.checked.clear()
            with pytest.raises(ServiceError):
                players.log_in(name, password)
            assert len(passwords.checked) == 1, name
            assert (passwords.checked[0] is None) == (name != "Ann"), name
    finally:
        store.close()


def test_names_are_unique_ignoring_case_and_unicode_forms(players: Players) -> None:
    players.register("Zoë", PASSWORD)
    for other in ("ZOË", "zoe\u0308"):  # upper case; e + combining diaeresis
        with pytest.raises(ServiceError) as error:
            players.register(other, PASSWORD)
        assert error.value.reason == "NAME_TAKEN"
        assert error.value.status == Code.ALREADY_EXISTS


#: Look-alikes of "alice": Cyrillic а, Cyrillic е, a dotless ı, an accent, a digit for l.
LOOK_ALIKES = ("\u0430lice", "alic\u0435", "al\u0131ce", "a\u0300lice", "a1ice")


def test_a_name_that_looks_like_an_existing_one_is_refused(players: Players, url: str) -> None:
    players.register("Alice", PASSWORD)
    for other in LOOK_ALIKES:
        with pytest.raises(ServiceError) as error:
            players.register(other, PASSWORD)
        assert (error.value.status, error.value.reason) == (
            Code.ALREADY_EXISTS,
            "NAME_CONFUSABLE",
        ), other
        assert "looks like another account's name" in error.value.message
    guest = players.create_guest("Al")
    with pytest.raises(ServiceError) as error:  # a guest taking a name: the same rule
        players.register(LOOK_ALIKES[0], PASSWORD, upgrade_token=guest.access_token)
    assert error.value.reason == "NAME_CONFUSABLE"
    assert sorted(row.kind for row in _rows(url, accounts)) == ["guest", "named"]  # type: ignore[attr-defined]
    players.register("Alicia", PASSWORD)  # a name that merely starts alike is fine


def test_accounts_made_before_skeletons_get_theirs_oldest_first(url: str, clock: Clock) -> None:
    """Rows made before migration 0011 have no skeleton: the service fills them at start,
    and the older of two look-alikes keeps the name's skeleton."""
    engine = create_store_engine(url)
    with engine.begin() as connection:
        for at, (account_id, name) in enumerate((("a-old", "alice"), ("a-new", LOOK_ALIKES[0]))):
            connection.execute(
                insert(accounts).values(
                    account_id=account_id,
                    kind="named",
                    name=name,
                    name_key=names.account_name(name)[1],
                    display_name=name,
                    password_hash="x",
                    created_at=at,
                )
            )
    store = PlayersStore(url)
    try:
        assert store.fill_skeletons(names.skeleton) == (1, 1)
        assert store.fill_skeletons(names.skeleton) == (0, 1)  # the look-alike keeps none
        players = Players(store, AccessTokens("unit-secret", clock), clock=clock)
        with pytest.raises(ServiceError) as error:
            players.register(LOOK_ALIKES[1], PASSWORD)
        assert error.value.reason == "NAME_CONFUSABLE"
    finally:
        store.close()
    skeletons = {row.account_id: row.name_skeleton for row in _rows(url, accounts)}  # type: ignore[attr-defined]
    engine.dispose()
    assert skeletons == {"a-old": "alice", "a-new": None}


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("ab", "INVALID_ACCOUNT_NAME"),
        ("a" * 33, "INVALID_ACCOUNT_NAME"),
        ("ann smith", "INVALID_ACCOUNT_NAME"),
        ("ann\u202e", "INVALID_ACCOUNT_NAME"),
        ("_ann", "INVALID_ACCOUNT_NAME"),
        ("ann\u200b", "INVALID_ACCOUNT_NAME"),
    ],
)
def test_bad_account_names_are_refused(players: Players, name: str, reason: str) -> None:
    with pytest.raises(ServiceError) as error:
        players.register(name, PASSWORD)
    assert error.value.reason == reason
    assert error.value.status == Code.INVALID_ARGUMENT


@pytest.mark.parametrize("shown", ["", "   ", "\u200b\u200b", "Ann\u202eevil", "Ann\x07", "x" * 41])
def test_bad_display_names_are_refused(shown: str) -> None:
    with pytest.raises(ServiceError) as error:
        names.display_name(shown)
    assert error.value.reason == "INVALID_DISPLAY_NAME"


def test_short_passwords_are_refused_and_nothing_is_stored(players: Players, url: str) -> None:
    with pytest.raises(ServiceError) as error:
        players.register("Ann", "short")
    assert error.value.reason == "INVALID_PASSWORD"
    assert _rows(url, accounts) == []


def test_refresh_rotates_and_a_reused_token_revokes_the_whole_session(
    players: Players, clock: Clock, revoked: list[tuple[list[str], int]]
) -> None:
    first = players.register("Ann", PASSWORD)
    second = players.refresh(first.refresh_token)
    assert second.refresh_token != first.refresh_token
    assert second.identity.session_id == first.identity.session_id
    third = players.refresh(second.refresh_token)

    with pytest.raises(ServiceError) as reused:
        players.refresh(first.refresh_token)  # stolen and replayed

    assert reused.value.reason == "REFRESH_TOKEN_REUSED"
    assert revoked == [([first.identity.session_id], int(clock.now) + 60)]
    with pytest.raises(ServiceError) as after:
        players.refresh(third.refresh_token)  # the thief's and the owner's newest alike
    assert after.value.reason == "SESSION_REVOKED"
    with pytest.raises(ServiceError) as who:
        players.who_am_i(third.access_token)
    assert who.value.reason == "SESSION_REVOKED"


def test_an_expired_or_unknown_refresh_token_is_refused(players: Players, clock: Clock) -> None:
    issued = players.create_guest("Ann")
    with pytest.raises(ServiceError) as unknown:
        players.refresh("made-up")
    assert unknown.value.reason == "REFRESH_TOKEN_INVALID"
    clock.now += 3601
    with pytest.raises(ServiceError) as expired:
        players.refresh(issued.refresh_token)
    assert expired.value.reason == "REFRESH_TOKEN_EXPIRED"
    assert expired.value.status == Code.UNAUTHENTICATED


def test_an_access_token_expires_after_its_lifetime(players: Players, clock: Clock) -> None:
    issued = players.create_guest("Ann")
    assert players.who_am_i(issued.access_token).account_id == issued.identity.account_id
    clock.now += 61
    with pytest.raises(ServiceError) as error:
        players.who_am_i(issued.access_token)
    assert error.value.reason == "TOKEN_EXPIRED"


def test_log_out_ends_one_session_and_everywhere_ends_all(
    players: Players, clock: Clock, revoked: list[tuple[list[str], int]]
) -> None:
    players.register("Ann", PASSWORD)
    one, two, three = (players.log_in("Ann", PASSWORD) for _ in range(3))

    assert players.log_out(one.access_token) == 1
    with pytest.raises(ServiceError):
        players.refresh(one.refresh_token)
    assert players.who_am_i(two.access_token).account_id == one.identity.account_id

    assert players.log_out_everywhere(two.access_token) == 3  # the register's session too
    for issued in (two, three):
        with pytest.raises(ServiceError) as error:
            players.refresh(issued.refresh_token)
        assert error.value.reason == "SESSION_REVOKED"
    listed = {session for session, _until in players.revocations()}
    assert {one.identity.session_id, two.identity.session_id} <= listed
    assert len(revoked) == 2
    clock.now += 61  # their access tokens have expired: the list forgets them
    assert players.revocations() == []


def test_a_guest_becomes_a_named_account_keeping_its_id(players: Players, url: str) -> None:
    guest = players.create_guest("Ann")
    named = players.register("ann", PASSWORD, upgrade_token=guest.access_token)
    assert named.identity.account_id == guest.identity.account_id
    assert named.identity.kind == "named"
    assert players.log_in("Ann", PASSWORD).identity.account_id == guest.identity.account_id
    with pytest.raises(ServiceError) as error:
        players.log_in_guest(guest.identity.account_id, guest.device_secret)
    assert error.value.reason == "LOGIN_FAILED"  # the device secret went with the guest


def test_display_names_name_the_known_accounts_and_leave_out_the_others(
    players: Players,
) -> None:
    ada = players.create_guest("Ada").identity.account_id
    bob = players.create_guest("Bob").identity.account_id
    assert players.display_names([ada, bob, ada, "g-nobody"]) == {ada: "Ada", bob: "Bob"}
    assert players.display_names([]) == {}


def test_too_many_accounts_names_at_once_are_refused(players: Players) -> None:
    with pytest.raises(ServiceError) as refused:
        players.display_names([f"g-{n}" for n in range(501)])
    assert refused.value.status == Code.INVALID_ARGUMENT
    assert refused.value.reason == "TOO_MANY_ACCOUNTS"
