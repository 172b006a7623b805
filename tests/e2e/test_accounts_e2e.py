"""Who a player is, end to end: accounts through the gateway, on SQLite and on PostgreSQL.

Guests and named accounts, log in, refresh with rotation and reuse
detection, log out on every gateway replica at once, table events naming
accounts, streams refused once their identity expires, and a host whose
token expired acting again after a refresh. Every refusal has its status,
a stable reason and a sentence, and changes nothing; no password or token
ever reaches a log.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from president.client import GatewayClient, GatewayError, play_seat
from president.servicekit.launcher import Stack
from tests.support.gateway_truth import Store, expect
from tests.support.replicas import second_gateway
from tests.support.servers import delete_stream, isolated_env

PASSWORD = "a long enough passphrase"
UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED
INVALID = grpc.StatusCode.INVALID_ARGUMENT
ACCESS_TTL = 6
CLUB = "https://id.club.example"


@pytest.fixture
async def client(stack: Stack) -> AsyncIterator[GatewayClient]:
    made = GatewayClient.connect(stack.gateway)
    yield made
    await made.close()


def _name() -> str:
    return f"ann-{uuid.uuid4().hex[:8]}"


async def test_a_look_alike_of_an_existing_name_is_refused(client: GatewayClient) -> None:
    """Cyrillic а and е, a dotless ı and an accent make names that look like another's:
    NAME_CONFUSABLE, and nothing is made (the look-alike does not log in)."""
    tail = uuid.uuid4().hex[:8]
    await client.register(f"alice-{tail}", PASSWORD)
    stranger = client.sibling()
    for alike in ("\u0430lice", "alic\u0435", "al\u0131ce", "a\u0300lice"):
        refused = await expect(
            stranger.register(f"{alike}-{tail}", PASSWORD),
            grpc.StatusCode.ALREADY_EXISTS,
            "NAME_CONFUSABLE",
        )
        assert "looks like another account's name" in refused.message
        await expect(stranger.log_in(f"{alike}-{tail}", PASSWORD), UNAUTHENTICATED, "LOGIN_FAILED")


async def _refused_everywhere(clients: list[GatewayClient], reason: str) -> None:
    """Each client's calls are refused with ``reason`` (revocations travel on NATS: the
    players service answers once NATS has them, so a few tries at most)."""
    for each in clients:
        for attempt in range(50):
            try:
                await each.who_am_i()
            except GatewayError as error:
                assert (error.code, error.reason) == (UNAUTHENTICATED, reason), error
                break
            assert attempt < 49, "the revoked identity was still accepted"
            await asyncio.sleep(0.05)


# --------------------------------------------------------------------------- accounts
async def test_guests_and_named_accounts_through_the_gateway(client: GatewayClient) -> None:
    guest = await client.create_guest("Ann")
    assert guest.identity.kind == 1 and guest.device_secret  # ACCOUNT_KIND_GUEST
    assert (await client.who_am_i()).account_id == client.player_id

    again = client.sibling()
    await again.log_in_guest(client.player_id, client.device_secret)
    assert again.player_id == client.player_id and again.token != client.token

    name = _name()
    named = await client.register(name, PASSWORD, display_name="Ann")
    assert named.identity.account_id == guest.identity.account_id  # the guest kept its id
    other = client.sibling()
    await other.log_in(name.upper(), PASSWORD)  # names ignore case
    assert other.player_id == client.player_id and (await other.who_am_i()).kind == 2


async def test_bad_account_calls_get_their_reason_and_change_nothing(
    client: GatewayClient,
) -> None:
    name = _name()
    await client.register(name, PASSWORD)
    stranger = client.sibling()
    cases = [
        (stranger.log_in(name, "the wrong passphrase"), UNAUTHENTICATED, "LOGIN_FAILED"),
        (stranger.log_in(_name(), PASSWORD), UNAUTHENTICATED, "LOGIN_FAILED"),
        (stranger.log_in_guest(client.player_id, "not-it"), UNAUTHENTICATED, "LOGIN_FAILED"),
        (stranger.register(name.upper(), PASSWORD), grpc.StatusCode.ALREADY_EXISTS, "NAME_TAKEN"),
        (stranger.register("no spaces allowed", PASSWORD), INVALID, "INVALID_ACCOUNT_NAME"),
        (stranger.register(_name(), "short"), INVALID, "INVALID_PASSWORD"),
        (stranger.register(_name(), PASSWORD, "Ann\u202e"), INVALID, "INVALID_DISPLAY_NAME"),
        (stranger.create_guest("\u200b"), INVALID, "INVALID_DISPLAY_NAME"),
        (stranger.sibling(refresh_token="x").refresh(), UNAUTHENTICATED, "REFRESH_TOKEN_INVALID"),
        (stranger.who_am_i(), UNAUTHENTICATED, "TOKEN_MISSING"),
        (client.sibling(token="forged.token.value").who_am_i(), UNAUTHENTICATED, "TOKEN_INVALID"),
    ]  # fmt: skip
    for call, code, reason in cases:
        await expect(call, code, reason)
    assert not stranger.token
    again = client.sibling()
    await again.log_in(name, PASSWORD)  # the account is as it was
    assert again.player_id == client.player_id


async def test_refresh_rotates_and_a_reused_refresh_token_ends_the_session(
    client: GatewayClient,
) -> None:
    await client.register(_name(), PASSWORD)
    stolen = client.refresh_token
    first_access = client.token
    await client.refresh()
    assert client.refresh_token != stolen and client.token != first_access
    assert (await client.who_am_i()).account_id == client.player_id

    thief = client.sibling(refresh_token=stolen)
    await expect(thief.refresh(), UNAUTHENTICATED, "REFRESH_TOKEN_REUSED")

    await _refused_everywhere([client], "SESSION_REVOKED")  # the owner's newest tokens too
    await expect(client.refresh(), UNAUTHENTICATED, "SESSION_REVOKED")


async def test_log_out_everywhere_is_refused_on_two_gateway_replicas_at_once(
    stack: Stack, client: GatewayClient
) -> None:
    name = _name()
    await client.register(name, PASSWORD)
    with second_gateway(stack) as address:
        elsewhere = GatewayClient.connect(address)
        try:
            await elsewhere.log_in(name, PASSWORD)
            here_too = client.sibling()
            await here_too.log_in(name, PASSWORD)
            await here_too.create_table("house", display_name="Ann")
            # One session logs out: only it stops, on both replicas.
            watcher = elsewhere.sibling(token=here_too.token, table_id=here_too.table_id)
            await here_too.log_out()
            await _refused_everywhere([watcher], "SESSION_REVOKED")
            assert (await elsewhere.who_am_i()).account_id == client.player_id
            # Everywhere: every session, on both replicas.
            revoked = await elsewhere.log_out_everywhere()
            assert revoked == 2
            old_tokens = [elsewhere.sibling(token=client.token), client]
            await _refused_everywhere(old_tokens, "SESSION_REVOKED")
            await expect(
                client.sibling(token=client.token, table_id=here_too.table_id).get_table(),
                UNAUTHENTICATED,
                "SESSION_REVOKED",
            )
        finally:
            await elsewhere.close()


async def test_every_table_event_names_the_account_that_acted(
    stack: Stack, client: GatewayClient
) -> None:
    store = Store(stack)
    try:
        await client.register(_name(), PASSWORD, display_name="Host")
        await client.create_table(
            "house", options={"game_end": "rounds:1"}, visibility="private", display_name="Host"
        )
        guest = client.sibling()
        await guest.join(client.table_id, "Guest")
        await client.add_bot()
        await client.add_bot()
        await client.start()
        await asyncio.gather(
            asyncio.wait_for(play_seat(client), 90), asyncio.wait_for(play_seat(guest), 90)
        )
        events = store.events(client.table_id)
        actors = {str(e.metadata.get("actor")) for e in events}
        assert {client.player_id, guest.player_id, "bot:basic", "server"} <= actors
        assert all(a in {client.player_id, guest.player_id, "bot:basic", "server"} for a in actors)
        view = await guest.get_table()
        # A bot's seat has a player id of its own (``bot:basic:<tag>``); its moves are the
        # level's account's (``bot:basic``), as the actors above show.
        seats = [s.player_id for s in view.seats]
        assert seats[:2] == [client.player_id, guest.player_id]
        assert all(p.startswith("bot:basic:") for p in seats[2:])
        assert len(set(seats)) == 4
        # Joining again with the same account gives the same seat, not a second one.
        assert (await guest.join(client.table_id, "Guest")).seat == guest.seat
    finally:
        store.close()


async def test_one_account_plays_at_two_tables_with_the_same_command_ids(
    client: GatewayClient,
) -> None:
    """Command ids are scoped by account and table: the seat bot's ids (the view's version)
    repeat from table to table, and each table's commands still run."""
    await client.create_guest("Ann")
    for _table in range(2):
        await client.create_table("house", options={"game_end": "rounds:1"}, display_name="Ann")
        await client.start()
        log = await asyncio.wait_for(play_seat(client), 90)
        assert log.last_view is not None and log.last_view.phase == "game_over"
        assert log.actions > 0 and "COMMAND_ID_REUSED" not in log.refused


# --------------------------------------------------------------------------- short-lived tokens
@pytest.fixture(scope="module")
def club_key() -> rsa.RSAPrivateKey:
    """The signing key of a club's own identity provider (made here)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def short_stack(
    tmp_path_factory: pytest.TempPathFactory, nats_url: str, club_key: rsa.RSAPrivateKey
) -> Iterator[Stack]:
    """The services on SQLite with access tokens that live a few seconds, and the club's
    identity provider trusted."""
    workdir = tmp_path_factory.mktemp("short")
    public = club_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    issuers = workdir / "issuers.json"
    issuers.write_text(
        json.dumps(
            {
                "issuers": [
                    {
                        "name": "club",
                        "issuer": CLUB,
                        "audience": "president",
                        "algorithms": ["RS256"],
                        "public_keys": [public.decode()],
                    }
                ]
            }
        )
    )
    env = {
        **isolated_env(),
        "PRESIDENT_ACCESS_TTL_SECONDS": str(ACCESS_TTL),
        "PRESIDENT_TRUSTED_ISSUERS": str(issuers),
    }
    stack = Stack(workdir, f"sqlite:///{workdir / 'president.db'}", nats_url, env)
    try:
        yield stack.start()
    finally:
        stack.stop()
        asyncio.run(delete_stream(nats_url, env["PRESIDENT_STREAM"]))


async def test_the_client_refreshes_its_access_token_before_it_expires(
    short_stack: Stack,
) -> None:
    async with GatewayClient.connect(short_stack.gateway) as client:
        await client.create_guest("Ann")
        first, first_expiry = client.token, client.expires_at
        await asyncio.sleep(ACCESS_TTL / 2 + 0.5)
        await client.who_am_i()
        assert client.token != first  # refreshed on its way, before it expired
        await asyncio.sleep(max(first_expiry - time.time(), 0) + 0.5)
        assert (await client.who_am_i()).account_id == client.player_id
        await expect(client.sibling(token=first).who_am_i(), UNAUTHENTICATED, "TOKEN_EXPIRED")


async def _until_expired(client: GatewayClient) -> str:
    """Wait for the client's access token to expire (auto-refresh off); its refresh token."""
    kept, client.refresh_token = client.refresh_token, ""
    await asyncio.sleep(max(client.expires_at - time.time(), 0) + 1.1)
    return kept


async def test_a_session_whose_token_expires_is_refused_further_plays(
    short_stack: Stack,
) -> None:
    async with GatewayClient.connect(short_stack.gateway) as host:
        await host.create_table("house", display_name="Ada")
        await host.start()
        session = host.session()
        async for change in session.changes():
            if change.view.round.phase == "play":
                break
        host.refresh_token = await _until_expired(host)
        error = await _refused(session.pass_())
        assert (error.code, error.reason) == (UNAUTHENTICATED, "TOKEN_EXPIRED"), error
        with pytest.raises(GatewayError) as ended:
            async for _change in session.changes():
                pass
        assert ended.value.reason == "TOKEN_EXPIRED"
        await session.close()
        # A fresh identity of the same account acts again at once.
        await host.refresh()
        async with host.session() as fresh:
            async for change in fresh.changes():
                assert change.view.seats[0].player_id == host.player_id
                break


async def _refused(call: object) -> GatewayError:
    try:
        await call  # type: ignore[misc]
    except GatewayError as error:
        return error
    raise AssertionError("accepted")


async def test_a_host_whose_token_expired_at_a_full_table_refreshes_and_runs_next_round(
    short_stack: Stack,
) -> None:
    async with GatewayClient.connect(short_stack.gateway) as host:
        await host.create_table(
            "house", options={"game_end": "rounds:3"}, visibility="private", display_name="Ada"
        )
        for _ in range(3):
            await host.add_bot()
        await host.start()
        first = await asyncio.wait_for(
            play_seat(host, until=lambda view: view.phase == "between_rounds"), 60
        )
        assert first.last_view is not None and first.last_view.phase == "between_rounds"
        kept = await _until_expired(host)
        await expect(host.host_action("next_round"), UNAUTHENTICATED, "TOKEN_EXPIRED")
        stranger = host.sibling()
        await expect(
            stranger.join(host.table_id, "Eve"), grpc.StatusCode.FAILED_PRECONDITION, "TABLE_FULL"
        )
        host.refresh_token = kept
        await host.refresh()
        assert (await host.join(host.table_id, "Ada")).seat == 0  # the same seat, not TABLE_FULL
        await host.host_action("next_round")
        view = await host.get_table()
        assert view.phase == "playing" or view.round.round_no == 2


def _club_token(key: rsa.RSAPrivateKey, **claims: object) -> str:
    body = {"iss": CLUB, "aud": "president", "sub": "member-7", "exp": time.time() + 300}
    body["name"] = "Zoë"
    body.update(claims)
    return jwt.encode(body, key, algorithm="RS256")


async def test_a_trusted_issuers_token_is_an_identity_and_forgeries_are_refused(
    short_stack: Stack, club_key: rsa.RSAPrivateKey
) -> None:
    async with GatewayClient.connect(short_stack.gateway) as member:
        member.token = _club_token(club_key)
        identity = await member.who_am_i()
        assert identity.account_id == "ext:club:member-7" and identity.display_name == "Zoë"
        await member.create_table("house", display_name="Zoë")
        view = await member.get_table()
        assert view.seats[0].player_id == "ext:club:member-7"
        stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        before = view.version
        cases = [
            (_club_token(stranger), "TOKEN_INVALID"),  # the club's name, another key
            (_club_token(club_key, iss="https://evil.example"), "ISSUER_UNTRUSTED"),
            (_club_token(club_key, aud="another-app"), "TOKEN_AUDIENCE"),
            (_club_token(club_key, exp=time.time() - 5), "TOKEN_EXPIRED"),
        ]
        for forged, reason in cases:
            impostor = member.sibling(token=forged, table_id=member.table_id)
            await expect(impostor.start(), UNAUTHENTICATED, reason)
        assert (await member.get_table()).version == before
        await expect(member.log_out(), grpc.StatusCode.FAILED_PRECONDITION, "EXTERNAL_IDENTITY")


def test_no_password_or_token_reaches_a_log(short_stack: Stack, stack: Stack) -> None:
    """Runs after the flows above (same modules' stacks): every service's log, grepped."""

    async def flows(address: str) -> list[str]:
        async with GatewayClient.connect(address) as client:
            secret = f"secret-{uuid.uuid4().hex}"
            await client.register(_name(), secret)
            await client.refresh()
            spent = [secret, client.token, client.refresh_token]
            await expect(client.sibling().log_in(_name(), secret), UNAUTHENTICATED, "LOGIN_FAILED")
            await client.log_out()
            return spent

    for each in (short_stack, stack):
        spent = asyncio.run(flows(each.gateway))
        logs = "".join(
            path.read_text(errors="replace") for path in Path(each.workdir).glob("*.log")
        )
        assert logs, "the services wrote no logs"
        for secret in spent:
            assert secret and secret not in logs
        assert PASSWORD not in logs


async def test_an_open_watch_ends_when_its_session_logs_out(
    stack: Stack, client: GatewayClient
) -> None:
    await client.create_table("house", display_name="Host", visibility="public")
    fan = client.sibling()
    await fan.create_guest("Fan")
    watching = fan.sibling(token=fan.token, table_id=client.table_id)
    changes = watching.watch()
    first = await asyncio.wait_for(anext(changes), 10)
    assert first.snapshot and first.view.seats[0].player_id == client.player_id
    await fan.log_out()
    with pytest.raises(GatewayError) as ended:
        await asyncio.wait_for(anext(changes), 10)  # rechecked within a second, quiet table
    assert (ended.value.code, ended.value.reason) == (UNAUTHENTICATED, "SESSION_REVOKED")
    await changes.aclose()
