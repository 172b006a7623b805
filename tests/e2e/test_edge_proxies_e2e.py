"""Whose ``X-Forwarded-For`` the web edge believes: only the proxies the operator names.

A stack of the players service, the gateway and the web edge with a small limit of
guests per address, and one configured proxy (127.0.0.2). A caller on loopback that
is not that proxy (127.0.0.1) names a new address in each request's
``X-Forwarded-For``: it is still counted, and limited, by its own address.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from president.servicekit.launcher import Stack
from tests.support.servers import isolated_env, sqlite_stack_in
from tests.support.web_edge import SERVICE_PATH, error_reason

GUESTS_PER_PEER = 3
PROXY = "127.0.0.2"


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory, nats_url: str) -> Iterator[Stack]:
    workdir = tmp_path_factory.mktemp("proxied")
    env = {
        **isolated_env(),
        "PRESIDENT_LIMITS_SCALE": "1",
        "PRESIDENT_RATE_GUEST_PEER": f"{GUESTS_PER_PEER}/60",
        "PRESIDENT_WEB_TRUSTED_PROXIES": PROXY,
        "PRESIDENT_WEB_STATIC_DIR": str(workdir),
    }
    with sqlite_stack_in(workdir, nats_url, env, ("players", "gateway", "web")) as stack:
        yield stack


async def guest(http: httpx.AsyncClient, browser: str) -> httpx.Response:
    return await http.post(
        f"{SERVICE_PATH}/CreateGuest",
        json={"displayName": "Browser"},
        headers={"content-type": "application/json", "x-forwarded-for": browser},
    )


async def test_the_configured_proxy_names_each_browser(proxied: Stack) -> None:
    transport = httpx.AsyncHTTPTransport(local_address=PROXY)
    async with httpx.AsyncClient(
        base_url=f"http://{proxied.address('web')}", transport=transport
    ) as http:
        for _ in range(GUESTS_PER_PEER):
            assert (await guest(http, "198.51.100.7")).status_code == 200
        assert error_reason((await guest(http, "198.51.100.7")).json()) == "RATE_LIMITED"
        assert (await guest(http, "198.51.100.8")).status_code == 200  # another browser


async def test_forwarded_for_from_an_unconfigured_peer_is_ignored(proxied: Stack) -> None:
    """Loopback is not a proxy unless named: each request naming a new address in
    X-Forwarded-For is counted by the caller's own address, and limited by it."""
    async with httpx.AsyncClient(base_url=f"http://{proxied.address('web')}") as http:
        answers = [await guest(http, f"203.0.113.{n}") for n in range(GUESTS_PER_PEER + 1)]
    assert [answer.status_code for answer in answers[:GUESTS_PER_PEER]] == [200] * GUESTS_PER_PEER
    refused = answers[GUESTS_PER_PEER]
    assert refused.status_code == 429
    assert error_reason(refused.json()) == "RATE_LIMITED"
