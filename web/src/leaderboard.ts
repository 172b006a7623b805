// The leaderboards page (#leaderboard): a preset's board by rating (of all time) or by points
// over a week, a month or all time, each row named (the gateway adds the names), your own row
// marked and your place shown when it is not on the page.

import type { LeaderboardEntry } from "@president/client/standings";
import { gateway, identity, sentence } from "./api";
import { byId, fill, h } from "./dom";
import { PRESETS } from "./rules";

const WINDOWS: [string, string][] = [
  ["all", "all time"],
  ["month", "this month"],
  ["week", "this week"],
];

function row(entry: LeaderboardEntry, board: string): HTMLElement {
  const mine = entry.accountId === identity.playerId;
  const name = entry.displayName || entry.accountId;
  const value =
    board === "points"
      ? String(entry.points)
      : `${entry.value.toFixed(1)}${entry.rating?.provisional ? " (provisional)" : ""}`;
  return h(
    "tr",
    { class: mine ? "me" : "", "data-account": entry.accountId },
    h("td", {}, String(entry.rank)),
    h("th", { scope: "row" }, mine ? `${name} (you)` : name),
    h("td", {}, value),
  );
}

export async function showLeaderboard(back: () => void, profile: () => void): Promise<void> {
  const preset = h("select", { id: "board-preset" }, ...Object.keys(PRESETS).map((name) => h("option", { value: name }, name)));
  const board = h("select", { id: "board-kind" }, h("option", { value: "rating" }, "rating"), h("option", { value: "points" }, "points"));
  const span = h("select", { id: "board-window", disabled: true }, ...WINDOWS.map(([value, label]) => h("option", { value }, label)));
  const status = h("p", { id: "board-status", role: "status" });
  const rows = h("tbody", { id: "board-rows" });
  const own = h("p", { id: "board-own" });
  const caption = h("caption", { id: "board-caption" });
  const show = async (): Promise<void> => {
    span.disabled = board.value !== "points"; // a rating is of all time
    if (span.disabled) span.value = "all";
    status.textContent = "Asking the server for the board…";
    try {
      const answer = await gateway.getLeaderboard({ preset: preset.value, board: board.value, window: span.value });
      const found = answer.board;
      const entries = found?.entries ?? [];
      caption.textContent = `${preset.value}, by ${board.value}${board.value === "points" ? `, ${WINDOWS.find(([v]) => v === span.value)?.[1] ?? ""}` : ""}`;
      fill(rows, ...entries.map((entry) => row(entry, board.value)));
      const mine = found?.own;
      own.textContent = mine ? `Your place: ${mine.rank} of ${found?.total ?? 0}.` : "You are not on this board yet.";
      status.textContent = entries.length === 0 ? "No one is on this board yet." : `${found?.total ?? entries.length} player(s) on this board.`;
    } catch (error) {
      status.textContent = `The board is not available: ${sentence(error)}`;
    }
    document.body.dataset.ready = "leaderboard";
  };
  for (const control of [preset, board, span]) control.addEventListener("change", () => void show());
  fill(
    byId("main"),
    h(
      "header",
      { class: "bar" },
      h("h1", {}, "Leaderboards"),
      h("button", { onclick: back }, "Lobby"),
      h("button", { onclick: profile }, "Your profile"),
    ),
    h(
      "div",
      { class: "card-panel board-choice", role: "group", "aria-label": "Which board" },
      h("label", { for: "board-preset" }, "Preset"),
      preset,
      h("label", { for: "board-kind" }, "Ranked by"),
      board,
      h("label", { for: "board-window" }, "Points over"),
      span,
    ),
    status,
    own,
    h(
      "div",
      { class: "scroll", tabindex: 0, role: "region", "aria-label": "The board" },
      h(
        "table",
        { id: "board" },
        caption,
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Rank"), h("th", { scope: "col" }, "Player"), h("th", { scope: "col" }, "Value"))),
        rows,
      ),
    ),
  );
  await show();
}
