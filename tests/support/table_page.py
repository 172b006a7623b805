"""What the web table's page must show of the table as a table, read through the page.

Used by the browser game of ``tests/e2e/test_web_table.py``: the seats sit around the
table (the viewer at the bottom, the others clockwise in seat order), the trick shows
who played what and who passed, the game over shows every round's points and the
totals, dark mode and reduced motion follow the system's settings.
"""

from __future__ import annotations

import math
from pathlib import Path

from playwright.sync_api import Page

from president.events.v1 import events_pb2
from president.game.v1 import game_pb2
from president.gateway.v1 import gateway_pb2 as pb

#: Keeps, in the page, every move the trick row showed: "who|cards" or "who|passed".
TRICK_MOVES = """
window.trickMoves = new Set();
new MutationObserver(() => {
  for (const move of document.querySelectorAll("#trick .move")) {
    const who = move.querySelector(".move-who")?.textContent ?? "";
    const what = move.classList.contains("pass")
      ? "passed"
      : [...move.querySelectorAll(".card")].map((c) => c.getAttribute("aria-label")).join(",");
    window.trickMoves.add(`${who}|${what}`);
  }
}).observe(document, { childList: true, subtree: true });
"""


#: Keeps, in the page, every title the tab showed, in order.
TITLES = """
window.titles = [];
new MutationObserver(() => {
  const title = document.title;
  if (window.titles[window.titles.length - 1] !== title) window.titles.push(title);
}).observe(document, { childList: true, characterData: true, subtree: true });
"""


#: Keeps, in the page, every kind of timer the table ran (``turn``, ``bots``, ...).
DEADLINES = """
window.deadlines = new Set();
new MutationObserver(() => {
  if (document.body?.dataset.deadline) window.deadlines.add(document.body.dataset.deadline);
}).observe(document, { attributes: true, subtree: true, attributeFilter: ["data-deadline"] });
"""


def chimes(page: Page) -> int:
    """How many turn chimes the page played."""
    return int(page.evaluate("document.body.dataset.chimes || '0'"))


def trick_moves(page: Page) -> list[tuple[str, str]]:
    """The moves the trick row showed so far: (who, "passed" or the cards' spoken names)."""
    moves: list[str] = page.evaluate("[...window.trickMoves]")
    return [(who, what) for who, _, what in (move.partition("|") for move in moves)]


def assert_seats_around_the_table(page: Page, viewer: int, width: int) -> None:
    """The seats sit on an oval around the table's middle (where the trick is): the viewer's
    at the bottom, the others clockwise in seat order, every one inside the window."""
    # One look at the page (it redraws as the game moves): the felt's box and the seats'.
    felt, boxes = page.wait_for_function(
        """() => {
          const felt = document.querySelector("#felt")?.getBoundingClientRect();
          const seats = [...document.querySelectorAll("#seats li.seat")].map((s) => {
            const r = s.getBoundingClientRect();
            return [Number(s.dataset.seat), r.left, r.top, r.right, r.bottom];
          });
          return felt && felt.width > 0 && seats.length >= 3 && seats[0][3] > 0
            ? [[felt.left, felt.top, felt.right, felt.bottom], seats]
            : null;
        }"""
    ).json_value()
    cx, cy = (felt[0] + felt[2]) / 2, (felt[1] + felt[3]) / 2  # the table's middle
    centres = {
        seat: ((left + right) / 2, (top + bottom) / 2) for seat, left, top, right, bottom in boxes
    }
    assert all(left >= 0 and right <= width for _, left, _, right, _ in boxes), boxes
    assert max(centres, key=lambda seat: centres[seat][1]) == viewer, centres  # at the bottom
    count = len(centres)
    # Screen angles (y grows downwards): clockwise on the screen is a growing angle.
    angles = []
    for step in range(count):
        x, y = centres[(viewer + step) % count]
        angles.append(math.degrees(math.atan2(y - cy, x - cx)) % 360)
    turned = [(angle - angles[0]) % 360 for angle in angles]
    assert turned == sorted(turned) and len(set(turned)) == count, (centres, turned)


def round_points(messages: list[pb.WatchResponse]) -> list[list[int]]:
    """Each round's points by seat in the last game of the stream (its RoundEnded events)."""
    rounds: list[list[int]] = []
    for message in messages:
        name = message.event.type.rsplit(".", 1)[-1]
        if name == "GameStarted":
            rounds = []
        elif name == "RoundEnded":
            rounds.append(list(events_pb2.RoundEnded.FromString(message.event.payload).points))
    return rounds


def assert_final_standings(page: Page, view: game_pb2.TableView, rounds: list[list[int]]) -> None:
    """The game over shows the whole game: each seat's points round by round and its total
    (the sum of its rounds, the seat's score), best total first, the winners marked."""
    table = page.locator("#final-standings")
    heads = table.locator("thead th").all_inner_texts()
    assert heads == ["Place", "Player", *[f"Round {n}" for n in range(1, len(rounds) + 1)], "Total"]
    totals = []
    for row in table.locator("tbody tr").all():
        seat = int(row.get_attribute("data-seat") or "-1")
        points = [int(text) for text in row.locator("td.points").all_inner_texts()]
        total = int(row.locator("td.total").inner_text())
        assert points == [r[seat] for r in rounds], (seat, points, rounds)
        assert total == sum(points) == view.seats[seat].score, (seat, total, points)
        winner = seat in view.winners
        assert ("winner" in (row.get_attribute("class") or "")) == winner, seat
        totals.append(total)
    assert totals == sorted(totals, reverse=True) and len(totals) == len(view.seats), totals


def replay_the_game(page: Page, names: set[str], shot: Path) -> None:
    """The game's replay, from the game over's link: round by round each deal is checked as
    the replay reaches it and the hands are shown, re-created from the revealed secret, with
    the players' names; stepping on strikes out the cards played."""
    page.locator("#replay-link").click()
    page.wait_for_selector("body[data-ready=replay]")
    rounds: list[str] = []
    while page.locator("#replay-next-round").is_enabled():
        page.locator("#replay-next-round").click()
        step = page.locator("#replay-step")
        round_key = step.get_attribute("data-round") or ""
        if round_key in rounds or not round_key:
            continue
        page.wait_for_selector("#replay-round[data-verdict=ok]")
        rounds.append(round_key)
        shown = {
            name.strip() for name in page.locator("#replay-hands .seat-name").all_inner_texts()
        }
        assert shown == names, shown
        assert page.locator("#replay-hands .card").count() == 52  # every card, dealt once
        for _ in range(12):  # a few steps on: the plays are said by name, their cards struck
            page.locator("#replay-next").click()
        assert page.locator("#replay-hands .card.played").count() > 0
        if len(rounds) == 1:
            page.screenshot(path=str(shot), full_page=True)
    assert rounds == ["1/1", "1/2"], rounds
    steps = page.locator("#replay-recent li").all_inner_texts()
    assert any(name in text for text in steps for name in names), steps
    page.get_by_role("button", name="To the table").click()
    page.wait_for_selector("body[data-ready=table]")


def background_is_dark(page: Page) -> bool:
    """Whether the page's background is dark (its colour's mean below a half)."""
    colour = page.evaluate("getComputedStyle(document.body).backgroundColor")
    red, green, blue = (int(part) for part in colour[colour.index("(") + 1 : -1].split(",")[:3])
    return (red + green + blue) / 3 < 128
