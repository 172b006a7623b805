"""The web table in a real browser, through the real stack: a whole game played by tapping.

Debian's Chromium driven by Playwright (the launch of ``test_web_browser``), on
the stack ``make run`` starts (the five services and the web edge, SQLite, the
machine's NATS). One practice game of two short rounds is shared by the
assertions: a guest signs in, sees the lobby, creates a practice table, starts
it, and plays every turn by tapping cards of one rank and the gold button
(whose words come from PreviewPlay before anything is sent), passing when no
card can beat the pile; once it sits idle and watches the countdown run out
and the server move for it. Between rounds it deals the next one as the host;
round 2 has an exchange. Afterwards it opens the activity panel, checks the
deal of round 2 (exchange included) in the browser, sees a tampered secret
fail plainly, and exports its receipts, which ``president audit verify
--receipts`` accepts. A second browser context, phone-sized, watches the
same table: its page and every Watch message it was sent (read off the
network through the DevTools protocol) hold no card of any hand. No console
error on any page. Screenshots go to ``docs/images/``.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Locator,
    Page,
    Route,
    expect,
    sync_playwright,
)
from playwright.sync_api import (
    Error as PlaywrightError,
)

from president.events.v1 import events_pb2
from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.signatures import Signer
from president.servicekit.launcher import Stack
from tests.support.table_page import (
    DEADLINES,
    TITLES,
    TRICK_MOVES,
    assert_final_standings,
    assert_seats_around_the_table,
    background_is_dark,
    chimes,
    replay_the_game,
    round_points,
    trick_moves,
)
from tests.support.web_edge import ROOT, SERVICE_PATH, base_url, envelopes, web_stack  # noqa: F401  # the fixture

CHROMIUM = Path("/usr/bin/chromium")
IMAGES = ROOT / "docs" / "images"
TURN_SECONDS = 5
GAME_SECONDS = 150
DESKTOP = {"width": 1200, "height": 900}
PHONE = {"width": 390, "height": 844}
#: What the gold button says before PreviewPlay's answer (nothing chosen; waiting for it).
#: The timer's wait for an idle host (PRESIDENT_HOST_IDLE_SECONDS, its default here).
HOST_IDLE_SECONDS = 120
#: The practice table's bots' pace in this game (turn play: they wait before each move).
BOT_PACE_MS = 150
UNANSWERED = re.compile(r"^(Choose cards to play|…)$")

#: A between-rounds countdown on the page.
COUNTDOWN = re.compile(r"by itself in \d+ s")
#: The mute button: its name is its text, "Sound on" or "Sound off".
SOUND_BUTTON = re.compile(r"^Sound (on|off)$")


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


class Console:
    """The errors a page logged (console errors, uncaught exceptions)."""

    def __init__(self, page: Page) -> None:
        self.problems: list[str] = []
        page.on("console", self._message)
        page.on("pageerror", lambda error: self.problems.append(str(error)))

    def _message(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.problems.append(message.text)


#: Keeps, in the page, every hand card's button taken out of the page for good while its card
#: is still in the hand (the hand redrawn: a tap in progress would miss, focus would be lost).
HAND_REDRAWS = """
window.handRedraws = [];
new MutationObserver((records) => {
  const buttons = document.querySelectorAll("#hand .card[data-card]");
  const held = new Set([...buttons].map((c) => c.dataset.card));
  for (const record of records) {
    for (const node of record.removedNodes) {
      if (!(node instanceof Element)) continue;
      const inside = [...node.querySelectorAll("[data-card]")];
      for (const card of node.matches("[data-card]") ? [node] : inside) {
        const replaced = !card.isConnected && held.has(card.dataset.card);
        if (replaced) window.handRedraws.push(card.dataset.card);
      }
    }
  }
}).observe(document, { childList: true, subtree: true });
"""


class WatchTap:
    """Every byte of the page's Watch streams, as the network delivered it (DevTools protocol:
    a streamed response's body is read while it is still open)."""

    def __init__(self, context: BrowserContext, page: Page) -> None:
        self.cdp = context.new_cdp_session(page)
        self.bodies: dict[str, bytearray] = {}
        #: Where each Watch stream was opened (the edge, or the spectators' door).
        self.urls: list[str] = []
        self._opened: list[str] = []
        self.cdp.on("Network.responseReceived", self._response)
        self.cdp.on("Network.dataReceived", self._data)
        self.cdp.send("Network.enable")

    def _response(self, params: dict[str, Any]) -> None:
        if params["response"]["url"].endswith(f"{SERVICE_PATH}/Watch") and (
            params.get("type") != "Preflight"  # the browser's CORS question to the door
        ):
            self._opened.append(params["requestId"])
            self.urls.append(params["response"]["url"])

    def _data(self, params: dict[str, Any]) -> None:
        body = self.bodies.get(params["requestId"])
        if body is not None and params.get("data"):
            body.extend(base64.b64decode(params["data"]))

    def follow(self) -> None:
        """Start reading the streams opened since the last call (called outside the handlers)."""
        while self._opened:
            request = self._opened.pop()
            try:
                answer = self.cdp.send("Network.streamResourceContent", {"requestId": request})
                self.bodies[request] = bytearray(base64.b64decode(answer["bufferedData"]))
            except PlaywrightError as error:  # it ended already (a refusal): its whole body
                if "finished loading" not in str(error):
                    raise
                whole = self.cdp.send("Network.getResponseBody", {"requestId": request})
                body = whole["body"]
                raw = base64.b64decode(body) if whole["base64Encoded"] else body.encode()
                self.bodies[request] = bytearray(raw)

    def messages(self) -> list[pb.WatchResponse]:
        out = []
        for body in self.bodies.values():
            complete = bytes(body)
            for flags, payload in envelopes(complete[: _whole(complete)]):
                if not flags & 0x02:  # a message: one change, or several (batched)
                    message = json_format.Parse(payload, pb.WatchResponse())
                    out.extend(message.changes or [message])
        return out


def _whole(body: bytes) -> int:
    """The length of the whole envelopes at the start of ``body`` (a stream may stop mid-one)."""
    offset = 0
    while offset + 5 <= len(body):
        size = int.from_bytes(body[offset + 1 : offset + 5], "big")
        if offset + 5 + size > len(body):
            break
        offset += 5 + size
    return offset


SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
#: A card's code as the server writes it in a sentence ("2D", "10H", "RJ"): the page shows none.
CARD_CODE = re.compile(r"\b(?:10|[2-9JQKA])[CDHS]\b|\b[BR]J\b")
#: What a screen reader says of a card in a sentence.
CARD_SPOKEN = re.compile(
    r"(?:\d+|jack|queen|king|ace) of (?:clubs|diamonds|hearts|spades)|\w+ joker"
)


def face(card: str) -> str:
    """What the page shows of a card ("10♥")."""
    return card[:-1] + SUITS[card[-1]]


def sign_in(page: Page, name: str) -> None:
    page.wait_for_selector("body[data-ready=signin]")
    page.get_by_label("Your name at the table").fill(name)
    page.get_by_role("button", name="Sign in as a guest").click()
    page.wait_for_selector("body[data-ready=lobby], #signin-status:has-text('Could not')")
    assert page.evaluate("document.body.dataset.ready") == "lobby", page.locator(
        "#signin-status"
    ).inner_text()


def create_practice_table(page: Page) -> str:
    """With the form's labelled controls: the preset's values first, then two of them changed."""
    revolution = page.get_by_label("Revolutions (four of a kind reverses the order)")
    page.get_by_label("Rules (preset)").select_option("house")
    expect(revolution).to_be_checked()  # house plays revolutions
    page.get_by_label("Rules (preset)").select_option("classic")
    expect(revolution).not_to_be_checked()
    expect(page.get_by_label("Seconds per turn")).to_have_value("30")
    summary = page.locator("#new-preset-note .card-name").first  # "3♣ leads and must be…"
    expect(summary).to_have_text("3♣")
    expect(summary).to_have_attribute("aria-label", "3 of clubs")
    page.get_by_label("Who may sit").select_option(label="practice (you and bots)")
    page.get_by_label("The game ends").select_option(label="after a number of rounds")
    page.get_by_label("Rounds or points to end the game").fill("2")
    page.get_by_label("Seconds per turn").fill(str(TURN_SECONDS))
    # The bots wait before each move (the page's own pace is 800 ms; short here, to be lean).
    page.get_by_label(re.compile("^More options")).fill(f"bot_pace_ms={BOT_PACE_MS}")
    page.get_by_role("button", name="Create the table").click()
    page.wait_for_selector("body[data-ready=table]")
    return page.evaluate("new URLSearchParams(location.hash.slice(1)).get('table')")


class Player:
    """Plays the browser's seat by tapping, as a person would."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.plays = 0
        self.passes = 0
        self.refusal_notes: list[str] = []
        self.labels: list[str] = []
        self.idled = False
        self.countdown: list[str] = []
        self.between: list[str] = []
        self.returned = False
        self.received_new = False
        self.refused: list[str] = []
        self.mid_round_shot = False
        # The exchange's New marks may show for less than a step's poll: the page notes them.
        page.evaluate(
            """() => { window.sawNewMark = false;
            new MutationObserver(() => {
              if (document.querySelector('#hand .card.new .new-mark')) window.sawNewMark = true;
            }).observe(document.body, { childList: true, subtree: true, attributes: true }); }"""
        )

    def saw_new_marks(self) -> bool:
        """Whether the hand ever showed received cards marked New."""
        return self.received_new or bool(self.page.evaluate("window.sawNewMark"))

    def phase(self) -> str:
        return self.page.evaluate("document.body.dataset.phase || ''")

    def turn(self) -> str:
        return self.page.locator("#turn").inner_text()

    def step(self) -> None:
        page = self.page
        if page.locator("#next-round").count():
            # The timer's countdown, while the host thinks. It shows once the round's secret
            # is stored: until the dealer's reveal lands, the table waits for the server. After
            # the last round the reveal ends the game instead (slow on a loaded machine, so the
            # page may show between rounds first): then there is no countdown to see.
            deadline = time.monotonic() + 10
            while not COUNTDOWN.search(self.turn()):
                if self.phase() != "between_rounds":
                    return
                assert time.monotonic() < deadline, f"no countdown between rounds: {self.turn()}"
                page.wait_for_timeout(50)
            self.between.append(self.turn())
            page.locator("#next-round").click()
            page.wait_for_selector("body:not([data-phase=between_rounds])")
            return
        if page.locator("#hand .card.new .new-mark").count():
            self.received_new = True  # the exchange's cards, marked New
        # One read of the page: the exchange and its gold button can go between two reads.
        owing = page.evaluate(
            "() => document.querySelector('#exchange')"
            " ? (document.querySelector('#play')?.innerText ?? '') : ''"
        )
        if "give back" in owing.lower():
            self.give_back()
            return
        if not self.turn().startswith("Your turn"):
            page.wait_for_timeout(60)
            return
        if not self.idled and page.locator("#trick .pile").count():
            self.idle()
            return
        self.play_or_pass()

    def give_back(self) -> None:
        page = self.page
        owed = int(page.locator("#play").inner_text().split()[1])
        for card in page.locator("#hand .card:not(.new)").all()[:owed]:
            card.click()
        assert page.locator("#play").inner_text().startswith("Give back")
        page.locator("#play").click()
        self.returned = self.answered("You gave back")

    def answered_preview(self) -> bool:
        """Wait for the gold button's words; False when the turn ended first."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if not UNANSWERED.match(self.page.locator("#play").inner_text()):
                return True
            if not self.turn().startswith("Your turn"):
                return False
            self.page.wait_for_timeout(30)
        raise AssertionError("the gold button never said what the choice would play")

    def answered(self, accepted: str) -> bool:
        """Whether the command was accepted (the notice says so, or the game it ended is over:
        a notice does not outlive its game); a refusal is kept."""
        notice = self.page.locator("#notice")
        expect(notice).not_to_have_text("Sending…")  # said from the tap until the answer
        text = notice.inner_text()
        if text.startswith(accepted) or (not text and self.phase() == "game_over"):
            return True
        self.refused.append(text)
        return False

    def idle(self) -> None:
        """Idle on a turn with cards on the pile: the countdown runs out, the server passes."""
        page = self.page
        deadline = time.monotonic() + TURN_SECONDS + 10
        while time.monotonic() < deadline:
            text = self.turn()
            # The notice is read after the countdown: on a slow machine the server's move and
            # the bots' may bring your next turn (a new countdown) before this loop looks again.
            if page.locator("#notice:has-text('Time ran out for you')").count():
                self.idled = True
                return
            if text.startswith("Your turn") and text not in self.countdown:
                self.countdown.append(text)
            page.wait_for_timeout(200)
        raise AssertionError(f"the server never moved for the idle seat: {self.countdown}")

    def play_or_pass(self) -> None:
        page = self.page
        playable = page.locator("#hand .card[data-playable]").evaluate_all(
            "cards => cards.map(card => card.dataset.card)"
        )
        ranks = list(dict.fromkeys(card[:-1] for card in playable))  # weakest first
        for rank in ranks:
            if self.try_rank(rank):
                return
        if page.locator("#pass").is_enabled():
            page.locator("#pass").click()
            self.passes += self.answered("You passed")

    def try_rank(self, rank: str) -> bool:
        """Tap cards of ``rank`` one by one until the gold button offers a play; play it."""
        page = self.page
        gold = page.locator("#play")
        held = page.locator("#hand .card").evaluate_all("cards => cards.map(c => c.dataset.card)")
        cards = [page.locator(f"#hand .card[data-card='{c}']") for c in held if c[:-1] == rank]
        for card in cards:
            if self.plays % 2:
                card.press("Enter")  # the keyboard works as well as a tap
            else:
                card.click()
            if not self.answered_preview():
                return False  # the turn ended meanwhile (the round did, or the timer)
            if self.plays % 2 and card.count():  # the keyboard's focus stays on its card
                assert card.evaluate("c => c === document.activeElement"), card
            if gold.is_enabled():
                label = gold.inner_text()
                assert label.startswith("Play "), label
                self.labels.append(label)
                if not self.mid_round_shot and page.locator("#trick .pile").count():
                    page.screenshot(path=str(IMAGES / "web-table.png"), full_page=True)
                    self.mid_round_shot = True
                if self.plays % 2:
                    gold.press("Enter")
                else:
                    gold.click()
                self.plays += self.answered("You played")
                return True
            note = page.locator("#play-note").inner_text()
            assert note, "a choice that cannot be played says why"
            self.refusal_notes.append(note)
        for chosen in page.locator("#hand .card.chosen").evaluate_all(
            "cards => cards.map(c => c.dataset.card)"
        ):
            page.locator(f"#hand .card[data-card='{chosen}']").click()
        return False


def test_a_guest_plays_a_whole_game_at_the_web_table(
    web_stack: Stack,  # noqa: F811
    browser: Browser,
    tmp_path: Path,
) -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    site = base_url(web_stack)

    # A public table for the lobby to list (made through the site by another guest).
    host = browser.new_context(viewport=DESKTOP)
    host_page = host.new_page()
    host_console = Console(host_page)
    host_page.goto(f"{site}/")
    sign_in(host_page, "Hana")
    host_page.get_by_label("Who may sit").select_option(label="public (in the lobby)")
    host_page.get_by_label("Table name (optional)").fill("Friday club")
    host_page.get_by_label("Jokers (wild cards)").check()
    host_page.get_by_role("button", name="Create the table").click()
    host_page.wait_for_selector("body[data-ready=table]")
    host_page.locator("#menu-rules").click()
    expect(host_page.locator("#rules")).to_contain_text("jokers=true")
    assert host_page.locator("#start").count() == 1 and host_page.locator("#add-bot").count() == 1

    player = browser.new_context(viewport=DESKTOP, accept_downloads=True)
    page = player.new_page()
    page.set_default_timeout(10_000)
    console = Console(page)
    page.add_init_script(HAND_REDRAWS)
    page.add_init_script(TRICK_MOVES)
    page.add_init_script(TITLES)
    page.add_init_script(DEADLINES)
    page.goto(f"{site}/")
    sign_in(page, "Ada")
    row = page.locator("#lobby-tables li", has_text="Friday club")
    row.wait_for()
    text = row.inner_text()
    assert "classic" in text and "host Hana" in text and "waiting for players" in text
    assert "3 of 4 seats free" in text
    page.screenshot(path=str(IMAGES / "web-lobby.png"), full_page=True)
    table_id = create_practice_table(page)

    # The spectator: phone-sized, the table's address, every Watch byte kept.
    watcher = browser.new_context(viewport=PHONE)
    watch_page = watcher.new_page()
    watch_console = Console(watch_page)
    tap = WatchTap(watcher, watch_page)
    watch_page.goto(f"{site}/")
    sign_in(watch_page, "Sam")
    watch_page.get_by_role("button", name="Join Friday club").click()  # from the lobby
    watch_page.wait_for_selector("body[data-ready=table]")
    expect(watch_page.locator("li.seat.me .seat-name")).to_have_text("Sam (you)")
    expect(host_page.locator("li.seat[data-seat='1'] .seat-name")).to_have_text("Sam")
    watch_page.goto(f"{site}/#table={table_id}")
    expect(watch_page.locator("#table-bar h1")).to_have_text(f"Table {table_id}")
    expect(watch_page.locator("#spectating")).to_have_count(1)
    tap.follow()

    page.locator("#start").click()
    page.get_by_role("button", name="React nice").click()  # a reaction, seen by the watcher
    expect(watch_page.locator("li.seat[data-seat='0'] .reaction")).to_have_text("Nice!")
    # The seats sit around the table: the player's own at the bottom, a spectator's seat 0.
    assert_seats_around_the_table(page, viewer=0, width=DESKTOP["width"])
    assert_seats_around_the_table(watch_page, viewer=0, width=PHONE["width"])
    seen_hand_in_spectator: list[str] = []
    chimed_before_mute = -1
    me = Player(page)
    deadline = time.monotonic() + GAME_SECONDS
    while me.phase() != "game_over":
        assert time.monotonic() < deadline, f"the game did not end: {me.phase()}"
        me.step()
        tap.follow()
        if me.plays == 2 and chimed_before_mute < 0 and chimes(page) > 0:
            page.get_by_role("button", name=SOUND_BUTTON).click()  # muted from now on
            chimed_before_mute = chimes(page)
        if me.plays == 3 and not seen_hand_in_spectator:
            # Mid-round: no card still in Ada's hand shows anywhere on the spectator's page.
            mine = page.locator("#hand .card").evaluate_all("cs => cs.map(c => c.dataset.card)")
            shown = watch_page.locator("body").inner_text()
            seen_hand_in_spectator = [card for card in mine if face(card) in shown]
            seen_hand_in_spectator.append(f"{len(mine)} checked")
    # Views, presence, reactions and the countdown changed the page all game: no card's
    # button was ever replaced while its card stayed in the hand.
    assert page.evaluate("window.handRedraws") == []
    page.locator("#menu-rules").click()  # the form's controls became the table's options
    expect(page.locator("#rules")).to_contain_text("game_end=rounds:2")
    expect(page.locator("#rules")).to_contain_text(f"turn_seconds={TURN_SECONDS}")
    expect(page.locator("#rules")).to_contain_text(f"bot_pace_ms={BOT_PACE_MS}")
    # The bots waited their pace: the table ran their timer (the server's MoveOn moved them).
    assert "bots" in page.evaluate("[...window.deadlines]"), page.evaluate("[...window.deadlines]")
    assert me.plays >= 4 and me.idled and me.saw_new_marks(), vars(me)
    assert any(label.startswith("Play ") for label in me.labels)
    assert [int(t.split()[2]) for t in me.countdown] == sorted(
        (int(t.split()[2]) for t in me.countdown), reverse=True
    ) and len(me.countdown) >= 2, me.countdown  # "Your turn: 5 s left", then fewer
    assert page.locator("#winners").count() == 1
    # The turn alert: a chime until muted, and the tab's title while the table waits for you.
    assert chimed_before_mute >= 1 and chimes(page) == chimed_before_mute, chimes(page)
    sound = page.get_by_role("button", name=SOUND_BUTTON)
    expect(sound).to_have_text("Sound off")
    expect(sound).to_have_attribute("aria-pressed", "false")
    assert page.evaluate("localStorage.getItem('president.sound-muted')") == "true"
    titles = page.evaluate("window.titles")
    assert "● Your turn · President" in titles and titles[-1] == "President", titles
    # Between rounds and after the game the host's idle timer shows as a countdown.
    waits = [re.search(r"dealt by itself in (\d+) s\.$", text) for text in me.between]
    assert waits and all(w and 0 < int(w.group(1)) <= HOST_IDLE_SECONDS for w in waits), me.between
    over_wait = re.search(r"goes back to its lobby in (\d+) s", me.turn())
    assert over_wait and 0 < int(over_wait.group(1)) <= HOST_IDLE_SECONDS, me.turn()
    # The trick was shown move by move, each with who made it: plays and passes, by name.
    moves = trick_moves(page)
    names = set(page.locator("#seats .seat-name").all_inner_texts())
    bots = {name.removesuffix(" (bot)") for name in names if name.endswith(" (bot)")}
    assert {who for who, what in moves if what == "passed"} & bots, moves
    assert {who for who, what in moves if CARD_SPOKEN.match(what)} & bots, moves
    assert any(who == "You" and what != "passed" for who, what in moves), moves
    assert "won by" in page.locator("#winners").inner_text()

    # The activity panel.
    page.locator("#menu-activity").click()
    page.wait_for_selector("#activity-items li")
    while page.locator("#activity-older").is_visible():  # page back to the game's start
        count = page.locator("#activity-items li").count()
        page.locator("#activity-older").click()
        expect(page.locator("#activity-items li")).not_to_have_count(count)
    activity = page.locator("#activity-items li").all_inner_texts()
    assert any("Time is up for Ada: the server acts." in line for line in activity), activity
    assert any(line.startswith("Ada plays") for line in activity), activity
    # Cards in the server's sentences are shown as faces and read out by name.
    assert not [line for line in activity if CARD_CODE.search(line)], activity
    named = page.locator("#activity-items .card-name").first
    assert re.search("[♣♦♥♠🃏]", named.inner_text()), named.inner_text()
    assert CARD_SPOKEN.fullmatch(named.get_attribute("aria-label") or ""), named

    # Check the deal of round 2 (it had an exchange), then with a tampered secret.
    page.locator("#menu-check-the-deal").click()
    page.locator("[data-round='1/2']").click()
    page.wait_for_selector("#deal-check[data-verdict]")
    assert page.locator("#deal-check").get_attribute("data-verdict") == "ok"
    checks = page.locator("#check-results li").all_inner_texts()
    assert any("shown before the deal" in text for text in checks), checks
    assert any("the ones you were dealt" in text for text in checks), checks
    assert any("strongest" in text for text in checks), checks  # an automatic give
    assert any("in return" in text for text in checks), checks  # a free return
    assert not [text for text in checks if CARD_CODE.search(text)], checks  # "gave you 2♦"
    labels = page.locator("#check-results .card-name").evaluate_all(
        "cards => cards.map(card => card.getAttribute('aria-label'))"
    )
    assert labels and all(CARD_SPOKEN.fullmatch(label) for label in labels), labels
    assert "checks out" in page.locator("#check-status").inner_text()
    page.screenshot(path=str(IMAGES / "web-deal-check.png"), full_page=True)
    page.locator("#check-secret").fill("00" * 32)
    page.locator("[data-round='1/2']").click()
    page.wait_for_selector("#deal-check[data-verdict=bad]")
    assert "does NOT check out" in page.locator("#check-status").inner_text()
    bad = page.locator("#check-results li.bad").all_inner_texts()
    assert any("is not the one shown before the deal" in text for text in bad), bad

    # The receipts, exported by the browser, prove the stored log to the audit. The browser
    # checks each one's signature against the key the gateway publishes (WebCrypto Ed25519).
    page.locator("#menu-receipts").click()
    page.wait_for_selector("#receipts-signatures[data-verdict]")
    said = page.locator("#receipts-signatures").inner_text()
    assert page.locator("#receipts-signatures").get_attribute("data-verdict") == "ok", said
    assert "signed by the operator's key" in said
    with page.expect_download() as download:
        page.locator("#export-receipts").click()
    receipts = tmp_path / "browser-receipts.json"
    download.value.save_as(receipts)
    kept = json.loads(receipts.read_text())
    assert kept["format"] == "president-receipts/1" and kept["table_id"] == table_id
    assert len(kept["receipts"]) > 20
    assert all(len(receipt["signature"]) == 128 for receipt in kept["receipts"])
    key = web_stack.operator_key_env()["PRESIDENT_OPERATOR_KEYS"]
    verify = (
        f"audit verify --db {web_stack.database_url} --table {table_id} --receipts {receipts} "
        f"--operator-key {key}"
    )
    audited = subprocess.run(
        [sys.executable, "-m", "president.cli.main", *verify.split()],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert "OK" in audited.stdout

    # The spectator saw the game and no card of any hand.
    tap.follow()
    watch_page.wait_for_selector("body[data-phase=game_over]")
    assert (
        watch_page.locator("#hand").count() == 0 and watch_page.locator("#hand-area").count() == 0
    )
    assert len(seen_hand_in_spectator) == 1, seen_hand_in_spectator  # only the "checked" mark
    # The spectator checks a deal too: the fingerprint alone, and it says why.
    watch_page.locator("#menu-check-the-deal").click()
    watch_page.locator("[data-round='1/1']").click()
    watch_page.wait_for_selector("#deal-check[data-verdict=ok]")
    checks = watch_page.locator("#check-results li").all_inner_texts()
    assert len(checks) == 2 and "without a seat" in checks[1], checks
    messages = [m for m in tap.messages() if m.view.table_id == table_id]  # not Friday club's
    assert len(messages) > 30 and any(m.view.phase == "game_over" for m in messages)
    # The results say each seat's own points (the view's points are by seat).
    over = next(m.view for m in reversed(messages) if m.view.phase == "game_over")
    lines = watch_page.locator("#results li").all_inner_texts()
    assert len(lines) == len(over.round.standings), lines
    for place, (line, seat) in enumerate(zip(lines, over.round.standings, strict=True)):
        name = over.seats[seat].display_name
        assert line.startswith(name) and f"{over.round.points[seat]} point(s)" in line, (
            place,
            line,
            list(over.round.points),
        )
    # The game over shows the whole game, round by round, with the totals (both pages).
    rounds = round_points(messages)
    assert len(rounds) == 2, rounds
    assert_final_standings(watch_page, over, rounds)
    assert_final_standings(page, over, rounds)
    # Dark mode follows the system's setting (a phone, at the game's end).
    assert not background_is_dark(watch_page)
    watch_page.emulate_media(color_scheme="dark")
    assert background_is_dark(watch_page)
    watch_page.screenshot(path=str(IMAGES / "web-game-over-dark-phone.png"), full_page=True)
    watch_page.emulate_media(color_scheme="light")
    replay_the_game(watch_page, {"Ada", "Bot 1", "Bot 2", "Bot 3"}, IMAGES / "web-replay-phone.png")
    # Cards and seats move with transitions, but not for a person who asked for less motion.
    seat = page.locator("#seats .seat").first
    assert seat.evaluate("s => getComputedStyle(s).transitionDuration") != "0s"
    page.emulate_media(reduced_motion="reduce")
    assert set(seat.evaluate("s => getComputedStyle(s).transitionDuration").split(", ")) == {"0s"}
    page.screenshot(path=str(IMAGES / "web-game-over.png"), full_page=True)
    # ... watched at the audience replica's spectators' door, not through the players' edge.
    door = f"http://{web_stack.door()}/"
    assert any(url.startswith(door) for url in tap.urls), tap.urls
    for message in messages:
        assert not message.view.HasField("viewer_seat")
        assert not message.view.round.hand and not message.view.round.new_cards
        assert not message.view.round.legal
        event = message.event
        if event.type.endswith("RoundStarted"):
            started = events_pb2.RoundStarted.FromString(event.payload)
            assert all(not hand.cards for hand in started.hands) and not started.set_aside
        if event.type.endswith("CardsGiven"):
            assert not events_pb2.CardsGiven.FromString(event.payload).cards

    # Play again: the host starts the table's next game.
    page.locator("#play-again").click()
    page.wait_for_selector("body:not([data-phase=game_over])")
    expect(page.locator("#phase")).to_contain_text("game 2")

    # Signing out ends the session: the page asks for a sign-in again.
    host_page.get_by_role("button", name="Lobby").click()
    host_page.get_by_role("button", name="Sign out").click()
    host_page.wait_for_selector("body[data-ready=signin]")
    assert host_page.evaluate("sessionStorage.length") == 0
    assert console.problems == [] and watch_console.problems == [] and host_console.problems == []
    for context in (player, watcher, host):
        context.close()


def choose_playable(page: Page, gold: Locator) -> str:
    """Select a card the page marks playable until its preview says it can be played (at a
    rapid table a bot may move the pile on between the two); the card chosen."""
    for _ in range(10):
        page.wait_for_selector("#hand .card[data-playable]")
        card = page.locator("#hand .card[data-playable]").first.get_attribute("data-card") or ""
        page.locator(f"#hand .card[data-card='{card}']").click()
        try:
            expect(gold).to_have_text(re.compile(r"^Play "), timeout=2_000)
            return card
        except AssertionError:
            if page.locator(f"#hand .card.chosen[data-card='{card}']").count():
                page.locator(f"#hand .card[data-card='{card}']").click()  # let go, choose again
    raise AssertionError("no card stayed playable long enough to play it")


def test_a_play_that_loses_a_rapid_race_says_so_and_the_cards_stay(
    web_stack: Stack,  # noqa: F811
    browser: Browser,
) -> None:
    """In rapid mode a play names the pile (trick version) it was chosen on. Held on a slow
    network (the browser's request waits) while a bot answers first, it is refused STALE:
    the page says so and the card stays in the hand."""
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    console = Console(page)
    page.goto(f"{base_url(web_stack)}/")
    sign_in(page, "Rae")
    page.get_by_label("Rules (preset)").select_option("house-rapid")
    page.get_by_label("The game ends").select_option(label="after a number of rounds")
    page.get_by_label("Rounds or points to end the game").fill("1")
    page.get_by_label(
        "More options, one name=value a line (they win over the controls; see the rules)"
    ).fill("bot_delay_ms=1500\nrapid_seconds=6")
    page.get_by_role("button", name="Create the table").click()
    page.wait_for_selector("body[data-ready=table]")
    page.locator("#menu-rules").click()
    expect(page.locator("#rules")).to_contain_text("game_end=rounds:1")
    # The rules in words say this table's timer, not the preset's 10 s.
    expect(page.locator("#rules")).to_contain_text("When nobody plays for 6 seconds")
    # A practice table made by the page paces its bots in turn play (800 ms unless told).
    expect(page.locator("#rules")).to_contain_text("bot_pace_ms=800")
    page.locator("#start").click()
    # Every sentence the notice shows, in order: a table event may replace one soon after.
    page.evaluate(
        """() => { window.notices = [];
        new MutationObserver(() => {
          const text = document.querySelector('#notice')?.textContent ?? '';
          if (text && window.notices[window.notices.length - 1] !== text) window.notices.push(text);
        }).observe(document.body, { childList: true, characterData: true, subtree: true }); }"""
    )
    gold = page.locator("#play")
    card = choose_playable(page, gold)
    held: list[str] = []
    named: list[str] = []  # the pile the page showed when it previewed the play it sent

    def slow_network(route: Route) -> None:
        """The play reaches the server only after the pile it names moved on (a bot
        answered first)."""
        held.append(route.request.post_data or "")
        named.append(page.evaluate("document.body.dataset.previewTrick"))
        sent = json.loads(held[-1]).get("trickVersion", 0)
        page.wait_for_selector(f"body:not([data-trick='{sent}'])")
        route.continue_()

    page.route(f"**{SERVICE_PATH}/Play", slow_network)
    gold.click()
    stale = "Someone played first: the trick moved on, and your cards stay in your hand."
    deadline = time.monotonic() + 10
    while stale not in (notices := page.evaluate("window.notices")):
        assert time.monotonic() < deadline, notices
        page.wait_for_timeout(50)
    assert page.locator(f"#hand .card[data-card='{card}']").count() == 1
    # A phone: the hand wraps inside the window, nothing scrolls sideways.
    boxes = page.locator("#hand .card").evaluate_all(
        "cards => cards.map(card => card.getBoundingClientRect().right)"
    )
    assert boxes and max(boxes) <= PHONE["width"], boxes
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.screenshot(path=str(IMAGES / "web-table-phone.png"), full_page=True)
    assert len(held) == 1 and json.loads(held[0])["trickVersion"] == int(named[0]), (held, named)
    page.unroute(f"**{SERVICE_PATH}/Play")
    # Chromium logs the refused call's status (ABORTED is HTTP 409 in Connect), nothing else.
    assert console.problems == [
        "Failed to load resource: the server responded with a status of 409 (Conflict)"
    ]
    context.close()


def test_the_browser_says_when_receipts_are_not_signed_by_the_published_key(
    web_stack: Stack,  # noqa: F811
    browser: Browser,
) -> None:
    """The receipts panel checks every kept receipt's Ed25519 signature in the browser against
    the keys GetOperatorKeys publishes: against another key, it says they prove nothing."""
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto(f"{base_url(web_stack)}/")
    sign_in(page, "Sig")
    page.get_by_role("button", name="Create the table").click()
    page.wait_for_selector("body[data-ready=table]")
    signatures = page.locator("#receipts-signatures")
    page.locator("#menu-receipts").click()
    page.wait_for_selector("#receipts-signatures[data-verdict]")
    assert signatures.get_attribute("data-verdict") == "ok", signatures.inner_text()

    other = Signer.generate()  # a key the operator never published
    published = pb.GetOperatorKeysResponse()
    published.keys.add(
        key_id=other.key_id, algorithm="ed25519", public_key=other.public_key, current=True
    )
    answer = json_format.MessageToJson(published)
    page.route(
        f"**{SERVICE_PATH}/GetOperatorKeys",
        lambda route: route.fulfill(status=200, content_type="application/json", body=answer),
    )
    page.locator("#menu-rules").click()
    page.locator("#menu-receipts").click()
    page.wait_for_selector("#receipts-signatures[data-verdict]")
    said = signatures.inner_text()
    assert signatures.get_attribute("data-verdict") == "bad", said
    assert "were not signed by the operator's key" in said and other.key_id in said
    context.close()
