"""The web table at a club, in a real browser on the real stack (Debian's Chromium through
Playwright, the stack of ``test_web_table``): what a club player reaches from the page.

- Check the deal after a whole 7-round club game of more than 600 changes (more than a
  Watch replays): the game is played through the gateway by the page's own identity (its
  seat played by the seat bot, six bots beside it, no bot delay), then the page opens the
  finished table and checks the deal of every round.
- Hand over host, and Leave: the host hands the role to a second person (a second browser
  context), then leaves the table.
- A host who closes the page: the countdown line says who is away and when the role passes
  on, and the role passes to the other person at the table once the host has been away
  longer than ``PRESIDENT_HOST_AWAY_SECONDS`` (2 s at this stack).
- A returning guest: the guest closes the tab (a new page in the same browser context),
  comes back signed in, and the full table's button says "Return to your seat".
- An access token about to expire: the page's next call renews it first (one Refresh,
  through ``@president/client``'s ``renewal``), keeps the new session, and goes on.
- No stale text: the last notice is gone in the next round and at game over; the
  revolution badge is gone between rounds and at game over; the deal check says "you" and
  names, never "seat 0"; the new table's "Rounds or points" shows the preset's own number
  (and cannot be edited) while the preset decides.
- The profile and the leaderboards after two people played a ranked round: the rating
  says "provisional", the history shows the round's place and points and names the others
  and links to the game's replay (which opens and checks the round's deal),
  the head-to-head with the opponent chosen by name, and the boards (rating, points this
  week) name every row, no account id shown.
- An invite link: the host of a private table copies it from the ? menu; a second browser
  (phone sized) opens it, signs in and is seated.
- Quick play: the first player finds no open table of the preset and gets a new one; the
  second is seated at that table.
- A replay opened at game 2 (``#replay=<id>&game=2``, two one-round games played through
  the gateway) shows game 2's first deal, checked.
- A guided first game: at a practice table created with the guide (offered, ticked, in the
  lobby), a panel explains round 1 step by step (start, wait, lead or beat, then the
  roles and the exchange once the round is over) and says nothing in round 2; the lobby
  then no longer ticks it; ticked again by hand it runs again, and Hide the guide ends it.
- Chat with a mute (two contexts): a newcomer sees what was said before she came; each
  sees the other's messages; the host mutes the
  other person, whose next message is refused in words beside the field and never
  reaches the host; the panel (labelled field, live log) has no serious axe violation.

- axe-core finds no serious or critical violation on the sign-in page, the lobby, the
  profile, the leaderboards and a table (before and during a round), phone sized.

No console error on any page. Screenshots go to ``$PRESIDENT_SHOTS`` (default
``web-shots/`` under pytest's temporary folder), desktop and phone sized.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from president.client.errors import GatewayError
from president.client.gateway import GatewayClient
from president.client.seat_bot import Action, choose, play_seat
from president.game.v1 import game_pb2 as gpb
from president.servicekit.launcher import Stack
from president.services.gateway.streams.watch import REPLAY_LIMIT
from tests.e2e.test_web_table import DESKTOP, PHONE, Console, browser, sign_in
from tests.support.axe import serious_violations, with_axe
from tests.support.web_edge import HOST_AWAY_SECONDS, base_url, web_stack

__all__ = ["browser", "web_stack"]  # the fixtures

T = TypeVar("T")
#: A whole club game of seven seats: seven rounds, more than 600 changes.
CLUB_SEATS = 7
GAME_SECONDS = 240
#: Rounds of house at three searched for one that ends in a revolution (about one in ten
#: does: the page's seat holds a four of a kind and plays it).
REVOLUTION_ROUNDS = 80


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("PRESIDENT_SHOTS")
    folder = Path(where) if where else tmp_path_factory.mktemp("web-shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """An async client's work, on an event loop of its own (Playwright's sync API holds this
    thread's)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class Visit:
    """A browser context and its page, its console watched."""

    def __init__(self, browser: Browser, stack: Stack, size: dict[str, int]) -> None:
        self.context: BrowserContext = browser.new_context(viewport=size)
        self.page: Page = self.context.new_page()
        self.consoles = [Console(self.page)]
        self.url = base_url(stack)

    def open(self, fragment: str = "") -> Page:
        self.page.goto(f"{self.url}/{fragment}")
        return self.page

    def new_tab(self) -> Page:
        """Close the tab, and open the site in a new one of the same browser context."""
        self.page.close()
        self.page = self.context.new_page()
        self.consoles.append(Console(self.page))
        return self.open()

    def close(self) -> None:
        assert [problem for console in self.consoles for problem in console.problems] == []
        self.context.close()


@pytest.fixture
# The stack first: it stops after the browser (Playwright's loop would hold this thread).
def visits(web_stack: Stack, browser: Browser) -> Iterator[list[Visit]]:
    opened: list[Visit] = []
    yield opened
    for visit in opened:
        visit.close()


def visit(visits: list[Visit], browser: Browser, stack: Stack, size: dict[str, int]) -> Visit:
    opened = Visit(browser, stack, size)
    visits.append(opened)
    return opened


def tokens(page: Page) -> dict[str, str]:
    """The page's own identity: its tokens, as the tab keeps them."""
    kept: dict[str, str] = page.evaluate("JSON.parse(sessionStorage.getItem('president.identity'))")
    return kept


def as_the_page(stack: Stack, kept: dict[str, str]) -> GatewayClient:
    """A client of the gateway signed in as the page's own identity."""
    return GatewayClient.connect(
        stack.address("gateway"),
        token=kept["token"],
        refresh_token=kept["refreshToken"],
        player_id=kept["playerId"],
    )


async def club_game(stack: Stack, kept: dict[str, str]) -> tuple[str, int]:
    """A whole club game at a practice table of seven, played with the page's identity (its
    seat, and the host's choices, by the seat bot), six bots beside it."""
    async with as_the_page(stack, kept) as client:
        created = await client.create_table(
            "club",
            options={"bot_delay_ms": "0"},
            seat_count=CLUB_SEATS,
            visibility="practice",
            display_name="Ada",
        )
        await client.start()
        await asyncio.wait_for(play_seat(client, host_rounds=99, keep=False), GAME_SECONDS)
        view = await client.get_table()
        return created.table_id, view.version


def test_the_deal_of_every_round_of_a_long_club_game_checks_out(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    ada = visit(visits, browser, web_stack, DESKTOP)
    page = ada.open()
    sign_in(page, "Ada")
    table_id, version = run(club_game(web_stack, tokens(page)))
    assert version > 600 > REPLAY_LIMIT, version  # longer than any Watch replays

    page.goto(f"{ada.url}/#table={table_id}")
    page.wait_for_selector("body[data-ready=table][data-phase=game_over]")
    started = time.monotonic()
    page.get_by_role("button", name="check the deal").click()
    rounds = page.locator("#check-rounds button")
    expect(rounds).to_have_count(7, timeout=30_000)
    print(f"{version} changes; the log read in {time.monotonic() - started:.2f} s")  # no assert
    gifts = 0
    for number in range(1, 8):
        page.get_by_role("button", name=f"Check round {number}", exact=True).click()
        expect(page.locator("#check-status")).to_have_text(
            f"Round {number} of game 1 checks out: "
            "this browser re-created its deal from the secret."
        )
        expect(page.locator("#check-results li.bad")).to_have_count(0)
        assert page.locator("#check-results li.ok").count() >= 2  # the fingerprint, the hand
        checks = page.locator("#check-results").inner_text()
        assert not re.search(r"\bseat \d", checks, re.IGNORECASE), checks  # "you", or a name
        gifts += checks.count(" gave ")
    assert gifts > 0  # Ada took part in an exchange (a Peasant or a President, or a Vice)
    page.screenshot(path=shots / "deal-check-desktop.png", full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=shots / "deal-check-phone.png", full_page=True)


def create_table(page: Page, name: str, preset: str = "club", who: str = "public") -> str:
    page.get_by_label("Rules (preset)").select_option(preset)
    page.get_by_label("Who may sit").select_option(label=f"{who} (in the lobby)")
    page.get_by_label("Table name (optional)").fill(name)
    page.get_by_role("button", name="Create the table").click()
    page.wait_for_selector("body[data-ready=table]")
    table_id: str = page.evaluate("new URLSearchParams(location.hash.slice(1)).get('table')")
    return table_id


def shoot(page: Page, shots: Path, name: str) -> None:
    """The page at desktop and phone size."""
    size = page.viewport_size
    page.screenshot(path=shots / f"{name}-desktop.png", full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=shots / f"{name}-phone.png", full_page=True)
    if size:
        page.set_viewport_size(size)


def test_the_host_hands_over_then_leaves(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    ada = visit(visits, browser, web_stack, DESKTOP).open()
    sign_in(ada, "Ada")
    create_table(ada, "Hand over night")
    bob = visit(visits, browser, web_stack, DESKTOP).open()
    sign_in(bob, "Bob")
    bob.get_by_role("button", name="Join Hand over night").click()
    bob.wait_for_selector("body[data-ready=table]")
    expect(bob.locator("#host")).to_have_count(0)  # Bob is not the host (yet)

    expect(ada.get_by_label("New host")).to_contain_text("Bob")  # Bob sat down
    ada.get_by_label("New host").select_option(label="Bob")
    shoot(ada, shots, "hand-over")
    ada.get_by_role("button", name="Hand over host").click()
    expect(ada.locator("#notice")).to_have_text("Bob is the host now.")
    expect(ada.locator("#host")).to_have_count(0)
    expect(bob.get_by_role("heading", name="You are the host")).to_be_visible()
    expect(bob.get_by_role("button", name="Start the game")).to_be_visible()

    ada.get_by_role("button", name="Leave the table").click()
    expect(ada.locator("#leave-question")).to_have_text("Give up your seat and leave the table?")
    shoot(ada, shots, "leave")
    ada.get_by_role("button", name="Stay").click()  # changing one's mind changes nothing
    expect(ada.get_by_role("button", name="Leave the table")).to_be_focused()
    ada.get_by_role("button", name="Leave the table").click()
    ada.get_by_role("button", name="Yes, leave").click()
    ada.wait_for_selector("body[data-ready=lobby]")
    expect(bob.locator("#seats")).not_to_contain_text("Ada")
    expect(bob.locator("#seats li.empty")).to_have_count(3)  # club: four seats, Bob's taken
    shoot(bob, shots, "new-host")


def test_a_host_who_closes_the_page_passes_the_role_on(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    ann = visit(visits, browser, web_stack, DESKTOP)
    host = ann.open()
    sign_in(host, "Ann")
    create_table(host, "Away night")
    ben = visit(visits, browser, web_stack, PHONE).open()
    sign_in(ben, "Ben")
    ben.get_by_role("button", name="Join Away night").click()
    ben.wait_for_selector("body[data-ready=table]")
    expect(host.locator("#seats")).to_contain_text("Ben")
    expect(ben.locator("#host")).to_have_count(0)  # Ann hosts, and her page is open
    ben.wait_for_timeout(HOST_AWAY_SECONDS * 1000 * 2)
    expect(ben.locator("#host")).to_have_count(0)  # still: Ann is connected
    # Every text the countdown line shows from now on (the wait is short: none is missed).
    ben.evaluate(
        """() => {
        const turn = document.querySelector('#turn');
        window.turnTexts = [];
        new MutationObserver(() => window.turnTexts.push(turn.textContent))
          .observe(turn, { childList: true, characterData: true, subtree: true });
        }"""
    )

    host.close()  # Ann's only page: her stream ends, the gateway reports her away
    expect(ben.get_by_role("heading", name="You are the host")).to_be_visible(timeout=30_000)
    expect(ben.get_by_role("button", name="Start the game")).to_be_visible()
    said = ben.evaluate("window.turnTexts")
    away = r"Ann, the host, is away: the host role passes to the next person here in [0-2] s\."
    assert any(re.fullmatch(away, text) for text in said), said
    shoot(ben, shots, "host-away")


def test_a_guest_closes_the_tab_and_returns_to_their_seat(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    cy = visit(visits, browser, web_stack, DESKTOP)
    page = cy.open()
    sign_in(page, "Cy")
    table_id = create_table(page, "Full house")
    for seats in (2, 3, 4):  # club: four seats, the other three bots
        page.get_by_role("button", name="Add a bot").click()
        expect(page.locator("#seats li.empty")).to_have_count(4 - seats)
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector("body[data-ready=table][data-phase=round]")
    page = cy.new_tab()  # the old tab's sessionStorage goes with it
    page.wait_for_selector("body[data-ready=lobby]")  # signed in again: no sign-in form
    expect(page.get_by_text("Signed in as Cy")).to_be_visible()
    row = page.locator("#lobby-tables li", has_text="Full house")
    expect(row).to_contain_text("0 of 4 seats free")
    expect(row.get_by_role("button", name="Return to your seat at Full house")).to_have_text(
        "Return to your seat"
    )
    expect(row.get_by_role("button", name="Watch Full house")).to_have_count(0)
    expect(page.locator("#your-seats")).to_contain_text("Full house")
    shoot(page, shots, "return-lobby")
    row.get_by_role("button", name="Return to your seat at Full house").click()
    page.wait_for_selector("body[data-ready=table]")
    assert table_id in page.url
    expect(page.locator("#seats li.me")).to_contain_text("Cy (you)")
    expect(page.locator("#spectating")).to_have_count(0)  # seated, not watching
    expect(page.locator("#hand-area")).to_be_visible()
    shoot(page, shots, "returned")

    # Signing out forgets the guest on this device: a new tab asks for a sign-in again.
    page.get_by_role("button", name="Lobby").click()
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_selector("body[data-ready=signin]")
    assert page.evaluate("localStorage.getItem('president.guest')") is None
    page = cy.new_tab()
    page.wait_for_selector("body[data-ready=signin]")


def test_the_page_renews_an_access_token_about_to_expire_and_goes_on(
    web_stack: Stack, browser: Browser, visits: list[Visit]
) -> None:
    rea = visit(visits, browser, web_stack, DESKTOP)
    page = rea.open()
    sign_in(page, "Rea")
    before = tokens(page)
    soon = int(time.time()) + 5  # within the page's margin (60 s): renewed before the call
    page.evaluate(
        """(soon) => {
          const key = "president.identity";
          const kept = JSON.parse(sessionStorage.getItem(key));
          sessionStorage.setItem(key, JSON.stringify({ ...kept, expiresAt: soon }));
        }""",
        soon,
    )
    page.get_by_role("link", name="Your profile").click()  # GetHistory
    page.wait_for_selector("body[data-ready=profile]")
    expect(page.locator("#profile-status")).not_to_contain_text("not available")
    after = tokens(page)
    assert after["refreshToken"] != before["refreshToken"]
    assert after["token"] != before["token"]
    assert int(after["expiresAt"]) > soon + 60
    assert (after["playerId"], after["name"]) == (before["playerId"], "Rea")
    page.get_by_role("button", name="Lobby").click()  # ListTables, with the new token
    page.wait_for_selector("body[data-ready=lobby]")
    expect(page.get_by_text("Signed in as Rea", exact=True)).to_be_visible()
    assert tokens(page)["refreshToken"] == after["refreshToken"]  # no second Refresh


def test_the_new_tables_rounds_or_points_show_the_presets_own(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    page = visit(visits, browser, web_stack, DESKTOP).open()
    sign_in(page, "Eve")
    count = page.get_by_label("Rounds or points to end the game")
    for preset, own in (("club", "7"), ("classic", "11"), ("house", "")):
        page.get_by_label("Rules (preset)").select_option(preset)
        expect(count).to_have_value(own)
        expect(count).to_be_disabled()  # the preset decides
    page.get_by_label("Rules (preset)").select_option("club")
    shoot(page, shots, "new-table")
    page.get_by_label("The game ends").select_option(label="after a number of rounds")
    expect(count).to_be_enabled()
    expect(count).to_have_value("7")  # the preset's own, to change
    page.get_by_label("The game ends").select_option(label="at a number of points")
    expect(count).to_have_value("11")


def step(page: Page) -> None:
    """The page's seat acts once, by tapping, if the table waits for it: a return in the
    exchange, a pass when it may, else its first playable card."""
    gold = page.locator("#play")
    owed = re.match(r"Choose (\d+) cards? to give back", gold.inner_text())
    if owed:
        for card in page.locator("#hand .card[data-card]").all()[: int(owed.group(1))]:
            card.click()
        gold.click()
    elif page.locator("#turn").inner_text().startswith("Your turn"):
        passing = page.locator("#pass")
        if passing.is_enabled():
            passing.click()
        else:
            page.locator("#hand .card[data-playable]").first.click()
            expect(gold).to_have_text(re.compile(r"^Play "))
            gold.click()
    else:
        return
    expect(page.locator("#notice")).not_to_have_text("Sending…")


FIRST_SIGHT_OF_ROUND_2 = """
window.firstSightOfRound2 = null;
new MutationObserver(() => {
  const phase = document.querySelector("#phase");
  if (window.firstSightOfRound2 === null && phase && phase.textContent.endsWith("round 2")) {
    window.firstSightOfRound2 = document.querySelector("#notice")?.textContent ?? "";
  }
}).observe(document.body, { subtree: true, childList: true, characterData: true });
"""


def test_the_last_notice_does_not_outlive_its_round(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    page = visit(visits, browser, web_stack, DESKTOP).open()
    sign_in(page, "Fay")
    page.get_by_label("Rules (preset)").select_option("classic")
    page.get_by_label("The game ends").select_option(label="after a number of rounds")
    page.get_by_label("Rounds or points to end the game").fill("2")
    # The table deals round 2 by itself: no host's click clears anything.
    page.get_by_label(re.compile("^More options")).fill(
        "bot_delay_ms=0\nbot_pace_ms=0\nadvance_seconds=1"
    )
    page.get_by_role("button", name="Create the table").click()
    page.wait_for_selector("body[data-ready=table], #lobby-status:has-text('Could not')")
    assert page.evaluate("document.body.dataset.ready") == "table", page.locator(
        "#lobby-status"
    ).inner_text()
    # The notice as the page first draws round 2, read in the page itself: a read from here
    # could come after this test's own first move of round 2 and its notice.
    page.evaluate(FIRST_SIGHT_OF_ROUND_2)
    page.get_by_role("button", name="Start the game").click()
    said: set[str] = set()  # the notices of round 1 (its plays and passes)
    shot = False
    while page.evaluate("document.body.dataset.phase") != "game_over":
        round_2 = page.locator("#phase").inner_text().endswith("round 2")
        if round_2 and not shot:
            shoot(page, shots, "next-round")
            shot = True
        step(page)
        if not round_2:
            said.add(page.locator("#notice").inner_text())
        page.wait_for_timeout(50)
    assert said - {""}, said  # round 1 left a notice behind ...
    first_sight = page.evaluate("window.firstSightOfRound2")
    assert first_sight == "", first_sight  # ... which round 2 did not show
    expect(page.locator("#notice")).to_have_text("")
    expect(page.locator("#results")).to_be_visible()
    shoot(page, shots, "game-over")


def quads_first(view: gpb.TableView) -> Action | None:
    """A four of a kind when the seat may play one (a revolution), else the simple choice."""
    fours = [list(a.cards) for a in view.round.legal if a.verb == "play" and len(a.cards) == 4]
    return ("play", fours[0]) if fours else choose(view)


async def revolution_between_rounds(stack: Stack, kept: dict[str, str]) -> str:
    """A house table of three (the page's seat played quads first, two bots) played round
    after round until one ends in a revolution; it waits between rounds."""
    async with as_the_page(stack, kept) as client:
        created = await client.create_table(
            "house",
            options={"bot_delay_ms": "0"},
            seat_count=3,
            visibility="practice",
            display_name="Gus",
        )
        await client.start()
        for number in range(1, REVOLUTION_ROUNDS + 1):
            await play_seat(
                client,
                policy=quads_first,
                until=lambda view: view.phase == "between_rounds" and view.round.round_no == number,  # noqa: B023 - this round's
                keep=False,
            )
            view = await client.get_table()
            if view.round.revolution:
                return created.table_id
            await client.host_action("next_round")
        pytest.fail(f"no revolution in {REVOLUTION_ROUNDS} rounds of house at three")


def test_the_revolution_badge_does_not_outlive_its_round(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    gus = visit(visits, browser, web_stack, DESKTOP)
    page = gus.open()
    sign_in(page, "Gus")
    table_id = run(revolution_between_rounds(web_stack, tokens(page)))
    page.goto(f"{gus.url}/#table={table_id}")
    page.wait_for_selector("body[data-ready=table][data-phase=between_rounds]")
    expect(page.locator("#results")).to_be_visible()
    expect(page.locator("#revolution")).to_have_count(0)  # the round it reversed is over
    shoot(page, shots, "between-rounds")
    page.get_by_role("button", name="End the game").click()
    page.wait_for_selector("body[data-phase=game_over]")
    expect(page.locator("#revolution")).to_have_count(0)


async def ranked_game(stack: Stack, ada: dict[str, str], bob: dict[str, str]) -> None:
    """One round of house at a public table (ranked): Ada hosts, Bob joins, a bot beside them."""
    async with as_the_page(stack, ada) as host, as_the_page(stack, bob) as guest:
        created = await host.create_table(
            "house",
            options={"bot_delay_ms": "0"},
            seat_count=3,
            visibility="public",
            display_name="Ada",
            name="Rated night",
        )
        await guest.join(created.table_id, "Bob")
        await host.add_bot()
        await host.start()
        await asyncio.wait_for(
            asyncio.gather(
                play_seat(host, host_rounds=1, keep=False), play_seat(guest, keep=False)
            ),
            GAME_SECONDS,
        )
        for _ in range(100):  # scoring folds the round in a moment after the game
            try:
                if (await host.history()).history.games:
                    return
            except GatewayError as error:
                if error.reason != "ACCOUNT_NOT_FOUND":
                    raise
            await asyncio.sleep(0.1)
        pytest.fail("scoring did not fold the round in 10 s")


def test_the_profile_and_the_leaderboards_name_the_players(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    ada = visit(visits, browser, web_stack, DESKTOP)
    with_axe(ada.context)
    page = ada.open()
    sign_in(page, "Ada")
    bob = visit(visits, browser, web_stack, DESKTOP).open()
    sign_in(bob, "Bob")
    bob_id = tokens(bob)["playerId"]
    run(ranked_game(web_stack, tokens(page), tokens(bob)))

    page.get_by_role("link", name="Your profile").click()
    page.wait_for_selector("body[data-ready=profile]")
    expect(page.locator("#ratings li[data-preset=house]")).to_contain_text("provisional: 1 of")
    game = page.locator("#history tbody tr").first
    expect(game).to_contain_text("house")
    others = game.locator("td").nth(2)  # names, never account ids
    expect(others).to_have_text(re.compile(r"^(Bob, basic bot|basic bot, Bob)$"))
    expect(game.locator(".places")).to_have_text(re.compile(r"^round 1: [123](st|nd|rd) \("))
    page.get_by_label("Opponent").select_option(label="Bob")
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("#h2h-result")).to_contain_text("Against Bob: 1 game(s) together")
    assert bob_id not in page.locator("main").inner_text()
    table_id = game.get_attribute("data-table")
    replay = game.get_by_role("link", name=re.compile("^Replay game 1 of house"))
    expect(replay).to_have_attribute("href", f"#replay={table_id}&game=1")
    shoot(page, shots, "profile")
    page.set_viewport_size(PHONE)
    assert serious_violations(page) == []  # the games' table scrolls sideways on a phone
    page.set_viewport_size(DESKTOP)

    page.get_by_role("button", name="Leaderboards").click()
    page.wait_for_selector("body[data-ready=leaderboard]")
    page.get_by_label("Preset").select_option("house")
    rows = page.locator("#board-rows tr")
    expect(rows).to_have_count(3)  # Ada, Bob and the basic bot's account
    expect(page.locator("#board-rows tr.me th")).to_have_text("Ada (you)")
    expect(page.locator("#board-rows")).to_contain_text("Bob")
    expect(page.locator("#board-rows")).to_contain_text("basic bot")
    expect(page.locator("#board-own")).to_have_text(re.compile(r"^Your place: [123] of 3\.$"))
    page.get_by_label("Ranked by").select_option("points")
    page.get_by_label("Points over").select_option("week")
    expect(page.locator("#board-caption")).to_have_text("house, by points, this week")
    expect(rows).to_have_count(2)  # bots earn no points board
    assert "g-" not in page.locator("#board").inner_text()  # no account id shows
    shoot(page, shots, "leaderboard")
    page.set_viewport_size(PHONE)
    assert serious_violations(page) == []

    # From the history, the game's replay: its round's deal checked as the replay reaches it.
    page.get_by_role("button", name="Your profile").click()
    page.wait_for_selector("body[data-ready=profile]")
    replay.click()
    page.wait_for_selector("body[data-ready=replay]")
    assert page.evaluate("location.hash") == f"#replay={table_id}&game=1"
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Replay of table {table_id}")
    expect(page.locator("#replay-step")).to_have_attribute("data-step", "1")
    page.get_by_role("button", name="End", exact=True).click()
    expect(page.locator("#replay-round")).to_have_attribute("data-verdict", "ok")
    expect(page.locator("#replay-hands .seat-name")).to_have_count(3)
    assert serious_violations(page) == []  # the replay, its hands shown


def test_an_invite_link_seats_a_guest_at_a_private_table(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    host = visit(visits, browser, web_stack, DESKTOP)
    host.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=host.url)
    page = host.open()
    sign_in(page, "Ida")
    page.get_by_label("Who may sit").select_option(label="private (joined by its id)")
    page.get_by_label("Table name (optional)").fill("Invite only")
    page.get_by_role("button", name="Create the table").click()
    page.wait_for_selector("body[data-ready=table]")
    table_id = page.evaluate("new URLSearchParams(location.hash.slice(1)).get('table')")
    page.get_by_role("button", name="invite").click()
    link = page.get_by_label("The table's invite link").input_value()
    assert link == f"{host.url}/#join={table_id}"
    page.get_by_role("button", name="Copy the invite link").click()
    expect(page.locator("#invite-status")).to_have_text(re.compile("^Copied"))
    assert page.evaluate("navigator.clipboard.readText()") == link
    shoot(page, shots, "invite")

    guest = visit(visits, browser, web_stack, PHONE)
    joe = guest.open(f"#join={table_id}")  # a second browser: signed in first, then seated
    sign_in_at_the_door(joe, "Joe")
    joe.wait_for_selector("body[data-ready=table]")
    assert f"#table={table_id}" in joe.url
    expect(joe.locator("#seats li.me")).to_contain_text("Joe (you)")
    expect(joe.locator("#spectating")).to_have_count(0)
    expect(page.locator("#seats")).to_contain_text("Joe")


def sign_in_at_the_door(page: Page, name: str) -> None:
    """Sign in as a guest where the page asks first (an invite link: no lobby after)."""
    page.wait_for_selector("body[data-ready=signin]")
    page.get_by_label("Your name at the table").fill(name)
    page.get_by_role("button", name="Sign in as a guest").click()


def test_quick_play_opens_a_table_then_seats_the_next_player_there(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    kim = visit(visits, browser, web_stack, DESKTOP).open()
    sign_in(kim, "Kim")
    kim.get_by_label("Preset for quick play").select_option("traditional")
    shoot(kim, shots, "quick-play")
    kim.get_by_role("button", name="Play now").click()
    kim.wait_for_selector("body[data-ready=table]")  # no open traditional table: a new one
    table_id = kim.evaluate("new URLSearchParams(location.hash.slice(1)).get('table')")
    expect(kim.locator("#seats li.me")).to_contain_text("Kim (you)")

    lou = visit(visits, browser, web_stack, DESKTOP).open()
    sign_in(lou, "Lou")
    expect(lou.locator("#lobby-tables li", has_text="Quick play")).to_have_count(1)
    lou.get_by_label("Preset for quick play").select_option("traditional")
    lou.get_by_role("button", name="Play now").click()
    lou.wait_for_selector("body[data-ready=table]")
    assert lou.evaluate("new URLSearchParams(location.hash.slice(1)).get('table')") == table_id
    expect(lou.locator("#seats li.me")).to_contain_text("Lou (you)")
    expect(kim.locator("#seats")).to_contain_text("Lou")


async def two_games(stack: Stack, kept: dict[str, str]) -> str:
    """Two one-round games at a practice table (Play again between), played with the page's
    identity by the seat bot."""
    async with as_the_page(stack, kept) as client:
        created = await client.create_table(
            "classic",
            options={"bot_delay_ms": "0", "bot_pace_ms": "0", "game_end": "rounds:1"},
            visibility="practice",
            display_name="Hal",
        )
        await client.start()
        await asyncio.wait_for(play_seat(client, keep=False), GAME_SECONDS)
        await client.host_action("play_again")
        second_over = lambda view: view.phase == "game_over" and view.game_no == 2  # noqa: E731
        await asyncio.wait_for(play_seat(client, until=second_over, keep=False), GAME_SECONDS)
        return created.table_id


def test_a_replay_opened_at_game_2_shows_game_2(
    web_stack: Stack, browser: Browser, visits: list[Visit]
) -> None:
    hal = visit(visits, browser, web_stack, DESKTOP)
    page = hal.open()
    sign_in(page, "Hal")
    table_id = run(two_games(web_stack, tokens(page)))
    page.goto(f"{hal.url}/#replay={table_id}&game=2")
    page.wait_for_selector("body[data-ready=replay]")
    expect(page.locator("#replay-step")).to_have_attribute("data-round", "2/1")
    expect(page.locator("#replay-round h2")).to_have_text("Round 1 of game 2")
    expect(page.locator("#replay-round")).to_have_attribute("data-verdict", "ok")


#: Every step of the guide the page shows, in order, with the round it shows it in (read in
#: the page itself: the table moves on while the test taps).
GUIDE_STEPS = """
window.guideSteps = [];
new MutationObserver(() => {
  const round = document.querySelector("#phase")?.textContent.match(/round (\\d+)/)?.[1] ?? "0";
  const step = document.querySelector("#guide")?.dataset.step ?? "none";
  const seen = `${round}:${step}`;
  if (window.guideSteps.at(-1) !== seen) window.guideSteps.push(seen);
}).observe(document.body, { subtree: true, childList: true, characterData: true,
  attributes: true });
"""


def test_a_guided_first_game_explains_round_1_then_gets_out_of_the_way(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    gil = visit(visits, browser, web_stack, DESKTOP)
    with_axe(gil.context)
    page = gil.open()
    sign_in(page, "Gil")
    guided = page.get_by_label(re.compile("^Guided first game"))
    expect(guided).to_be_checked()  # offered until seen through once
    page.get_by_label("Rules (preset)").select_option("classic")
    page.get_by_label("The game ends").select_option(label="after a number of rounds")
    page.get_by_label("Rounds or points to end the game").fill("2")
    page.get_by_label(re.compile("^More options")).fill("bot_delay_ms=0\nbot_pace_ms=0")
    page.get_by_role("button", name="Create the table").click()
    page.wait_for_selector("body[data-ready=table]")
    page.evaluate(GUIDE_STEPS)
    guide = page.get_by_role("region", name="Your first game, step by step")
    expect(guide).to_contain_text("press Start the game")
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector("body[data-phase=round]")
    shot = False
    while page.evaluate("document.body.dataset.phase") == "round":
        if not shot and page.locator("#guide[data-step=lead], #guide[data-step=beat]").count():
            shoot(page, shots, "guide")
            assert serious_violations(page) == []
            shot = True
        step(page)
        page.wait_for_timeout(50)
    expect(guide).to_contain_text("the exchange")  # round 1 is over: roles, the exchange
    expect(page.locator("#guide")).to_have_attribute("data-step", "roles")
    page.get_by_role("button", name="Deal the next round").click()
    page.wait_for_selector("body[data-phase=round]")
    while page.evaluate("document.body.dataset.phase") != "game_over":
        step(page)
        page.wait_for_timeout(50)
    steps = page.evaluate("window.guideSteps")
    in_round_1 = {seen.split(":")[1] for seen in steps if seen.startswith("1:")}
    # the bots move at once here: the page's seat is mostly the one to act (lead, beat)
    assert "roles" in in_round_1 and in_round_1 & {"lead", "beat", "wait", "out"}, steps
    assert [seen for seen in steps if seen.startswith("2:")] == ["2:none"], steps
    expect(page.locator("#guide")).to_have_count(0)
    assert shot
    page.get_by_role("button", name="Lobby", exact=True).click()
    page.wait_for_selector("body[data-ready=lobby]")
    expect(guided).not_to_be_checked()  # offered once: seen through, not ticked again
    guided.check()  # asked for again: shown again, and hidden at once
    page.get_by_role("button", name="Create the table").click()
    page.wait_for_selector("body[data-ready=table]")
    expect(guide).to_contain_text("press Start the game")
    page.get_by_role("button", name="Hide the guide").click()
    expect(page.locator("#guide")).to_have_count(0)


def test_the_host_mutes_a_seat_and_the_chat_says_so(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    host = visit(visits, browser, web_stack, DESKTOP)
    with_axe(host.context)
    cy = host.open()
    sign_in(cy, "Cy")
    create_table(cy, "Chat night")
    cy.get_by_label("Message to the table").fill("anyone for a game?")
    cy.get_by_role("button", name="Send").click()
    expect(cy.locator("#chat-log")).to_contain_text("You: anyone for a game?")
    dee = visit(visits, browser, web_stack, DESKTOP).open()
    sign_in(dee, "Dee")
    dee.get_by_role("button", name="Join Chat night").click()
    dee.wait_for_selector("body[data-ready=table]")
    earlier = dee.locator("#chat-items li", has_text="Cy: anyone for a game?")
    expect(earlier).to_have_count(1)  # said before she came: read once, not twice

    dee.get_by_label("Message to the table").fill("hello Cy ♥")
    dee.get_by_role("button", name="Send").click()
    expect(cy.get_by_role("log", name="Chat messages")).to_contain_text("Dee: hello Cy ♥")
    expect(dee.locator("#chat-log")).to_contain_text("You: hello Cy ♥")
    expect(dee.get_by_label("Message to the table")).to_have_value("")
    cy.get_by_label("Message to the table").fill("welcome")
    cy.get_by_label("Message to the table").press("Enter")
    expect(dee.locator("#chat-log")).to_contain_text("Cy: welcome")

    cy.get_by_role("button", name="Mute Dee").click()
    expect(cy.get_by_role("button", name="Unmute Dee")).to_have_attribute("aria-pressed", "true")
    expect(dee.locator("#seats li.me")).to_contain_text("muted")
    expect(dee.locator("#chat-log")).to_contain_text("The host muted you.")
    refusal = "The host muted you: your messages are not shown to the table."
    expect(dee.locator("#chat-refusal")).to_have_text(refusal)  # told at once
    dee.get_by_label("Message to the table").fill("can you hear me?")
    dee.get_by_role("button", name="Send").click()
    expect(dee.locator("#chat-refusal")).to_have_text(refusal)
    cy.get_by_label("Message to the table").fill("still here")
    cy.get_by_role("button", name="Send").click()
    expect(dee.locator("#chat-log")).to_contain_text("Cy: still here")  # she still reads
    expect(cy.locator("#chat-log")).not_to_contain_text("can you hear me?")
    shoot(dee, shots, "chat-muted")
    assert serious_violations(cy) == []
    cy.get_by_role("button", name="Unmute Dee").click()
    expect(dee.locator("#chat-refusal")).to_have_text("")
    dee.get_by_role("button", name="Send").click()  # what she wrote goes out now
    expect(cy.locator("#chat-log")).to_contain_text("Dee: can you hear me?")


def test_axe_finds_no_serious_violation_on_the_club_pages(
    web_stack: Stack, browser: Browser, visits: list[Visit], shots: Path
) -> None:
    una = visit(visits, browser, web_stack, PHONE)
    with_axe(una.context)
    page = una.open()
    page.wait_for_selector("body[data-ready=signin]")
    found = {"sign-in": serious_violations(page)}
    sign_in(page, "Una")
    found["lobby"] = serious_violations(page)
    page.get_by_role("link", name="Your profile").click()
    page.wait_for_selector("body[data-ready=profile]")
    expect(page.locator("#profile-status")).to_have_text(re.compile("not finished a round yet"))
    found["profile"] = serious_violations(page)
    page.get_by_role("button", name="Leaderboards").click()
    page.wait_for_selector("body[data-ready=leaderboard]")
    found["leaderboards"] = serious_violations(page)
    page.get_by_role("button", name="Lobby").click()
    page.wait_for_selector("body[data-ready=lobby]")
    page.get_by_role("button", name="Create the table").click()  # practice, the preset's own
    page.wait_for_selector("body[data-ready=table]")
    expect(page.get_by_role("button", name="Start the game")).to_be_visible()
    found["table"] = serious_violations(page)
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector("body[data-ready=table][data-phase=round]")
    found["table in a round"] = serious_violations(page)
    assert found == {name: [] for name in found}, found
