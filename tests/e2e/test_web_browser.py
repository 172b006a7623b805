"""A real headless browser on the web edge: the test page lists tables and checks a deal.

Debian's Chromium (``make install`` installs it when /usr/bin/chromium is
missing), driven by the Playwright Python package pointed at that binary. A
practice game is played through the gateway; the page, served by the edge,
reads the seat's own Watch stream over Connect, re-creates round 2 (which has
an exchange) with the browser's Web Crypto and says it checks out; with a
tampered secret it says plainly that it does not. No console error, no CSP
violation. Screenshots go to ``var/screenshots/``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

from president.client import GatewayClient, play_seat
from president.servicekit.launcher import Stack
from tests.support.web_edge import ROOT, base_url, web_stack  # noqa: F401  # the fixture

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = ROOT / "var" / "screenshots"
GAME_SECONDS = 120


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing: run make install (it apt-get installs it)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
        )
        yield launched
        launched.close()


async def two_rounds(gateway: str) -> tuple[str, str, str, str]:
    """A public table in the lobby, and a practice table whose seat played two rounds
    (the second has an exchange): (the public table, the practice table, its seat's
    token, a spectator's token)."""
    async with GatewayClient.connect(gateway) as lobby:
        public = await lobby.create_table("club", visibility="public", display_name="Host")
    async with GatewayClient.connect(gateway) as client:
        await client.create_table("classic", visibility="practice", display_name="Ada")
        game = asyncio.create_task(play_seat(client, host_rounds=2))
        await asyncio.sleep(0.3)
        await client.start()
        await asyncio.wait_for(game, GAME_SECONDS)
        spectator = await client.sibling().spectate(client.table_id)
        return public.table_id, client.table_id, client.token, spectator


def open_page(browser: Browser, url: str) -> tuple[Page, list[str]]:
    page = browser.new_page(viewport={"width": 900, "height": 900})
    problems: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=60_000)
    return page, problems


def test_the_page_lists_tables_and_checks_a_deal_with_its_exchange(
    web_stack: Stack,  # noqa: F811
    browser: Browser,
) -> None:
    # Playwright's sync API runs a loop in this thread: the game runs in a thread of its own.
    with ThreadPoolExecutor(1) as worker:
        public_id, table_id, token, spectator = worker.submit(
            asyncio.run, two_rounds(web_stack.gateway)
        ).result()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    address = f"{base_url(web_stack)}/edge.html#table={table_id}&token={token}&round=2"

    page, problems = open_page(browser, address)
    section = page.locator("section[aria-labelledby=check-title]")
    assert section.get_attribute("data-verdict") == "ok", section.inner_text()
    checks = page.locator("#check-results li")
    texts = checks.all_inner_texts()
    assert any("fingerprint" in text and "shown before the deal" in text for text in texts)
    assert any("the ones you were dealt" in text for text in texts)
    assert any("strongest" in text for text in texts), texts  # the automatic give
    assert any("in return" in text for text in texts), texts  # the free return
    assert page.locator("#check-results li.bad").count() == 0
    lobby = page.locator("#lobby-tables li").all_inner_texts()
    assert any(public_id in text and "club" in text for text in lobby), lobby
    page.screenshot(path=str(SCREENSHOTS / "edge-deal-check.png"), full_page=True)
    assert problems == []
    page.close()

    tampered = f"{address}&secret={'00' * 32}"
    page, problems = open_page(browser, tampered)
    assert section_verdict(page) == "bad"
    assert "does NOT check out" in page.locator("#check-status").inner_text()
    bad = page.locator("#check-results li.bad").all_inner_texts()
    assert any("is not the one shown before the deal" in text for text in bad), bad
    page.screenshot(path=str(SCREENSHOTS / "edge-deal-check-tampered.png"), full_page=True)
    assert problems == []
    page.close()

    # A spectator's page checks the fingerprint and says why nothing else.
    page, problems = open_page(
        browser, f"{base_url(web_stack)}/edge.html#table={table_id}&token={spectator}&round=2"
    )
    assert section_verdict(page) == "ok"
    texts = page.locator("#check-results li").all_inner_texts()
    assert len(texts) == 2 and "without a seat" in texts[1], texts
    assert problems == []
    page.close()


def section_verdict(page: Page) -> str | None:
    return page.locator("section[aria-labelledby=check-title]").get_attribute("data-verdict")
