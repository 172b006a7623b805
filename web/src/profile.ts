// The profile page (#profile): your ratings by preset ("provisional" until enough rounds),
// your games with each round's place and points, each linked to its replay, and how you
// fared against an opponent you played (GetHeadToHead: only the two players may ask).

import type { GameHistory, Rating } from "@president/client/standings";
import { gateway, identity, sentence } from "./api";
import { byId, fill, h } from "./dom";
import { replayLink } from "./replay";

const RESULTS: Record<string, string> = { won: "won", lost: "lost", stopped: "stopped", playing: "still playing" };

function ordinal(place: number): string {
  const tens = place % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : (["th", "st", "nd", "rd"][place % 10] ?? "th");
  return `${place}${suffix}`;
}

function signed(points: number | bigint): string {
  return Number(points) > 0 ? `+${points}` : String(points);
}

/** A rating in words: the number leaderboards rank by, mu ± sigma, and whether it is provisional. */
export function ratingText(rating: Rating): string {
  const shown = `${rating.conservative.toFixed(1)} (${rating.mu.toFixed(1)} ± ${rating.sigma.toFixed(1)})`;
  return rating.provisional
    ? `${shown}, provisional: ${rating.rounds} of ${rating.provisionalBelow} rounds rated`
    : `${shown} over ${rating.rounds} rounds`;
}

function ratingsList(ratings: Rating[]): HTMLElement {
  if (ratings.length === 0) return h("p", { id: "ratings-none" }, "No rated round yet: play at a public or private table to get a rating.");
  return h(
    "ul",
    { id: "ratings" },
    ...ratings.map((rating) =>
      h(
        "li",
        { "data-preset": rating.preset, class: rating.provisional ? "provisional" : "" },
        h("strong", {}, rating.preset),
        `: ${ratingText(rating)}`,
      ),
    ),
  );
}

function gameRow(game: GameHistory, names: Record<string, string>): HTMLElement {
  const others = game.others.map((id) => names[id] || id).join(", ");
  const started = game.startedAt ? new Date(game.startedAt).toLocaleString() : "";
  return h(
    "tr",
    { "data-table": game.tableId, "data-game": String(game.gameNo) },
    h("td", {}, started),
    h("td", {}, game.preset, game.ranked ? "" : " (unranked)"),
    h("td", {}, others || "bots only"),
    h("td", { class: "places" }, game.rounds.map((round) => `round ${round.roundNo}: ${ordinal(round.place)} (${signed(round.points)})`).join("; ")),
    h("td", { class: "points" }, signed(game.points)),
    h("td", {}, RESULTS[game.result] ?? game.result),
    h(
      "td",
      {},
      h(
        "a",
        { href: replayLink(game.tableId, game.gameNo), class: "replay", "aria-label": `Replay game ${game.gameNo} of ${game.preset}, started ${started}` },
        "Replay",
      ),
    ),
  );
}

function historyTable(games: GameHistory[], names: Record<string, string>): HTMLElement {
  if (games.length === 0) return h("p", { id: "history-none" }, "No game yet.");
  return h(
    "div",
    // Scrolls sideways on a phone: focusable, so a keyboard scrolls it too.
    { class: "scroll", tabindex: 0, role: "region", "aria-label": "Your games (scrolls sideways)" },
    h(
      "table",
      { id: "history" },
      h("caption", {}, "Your games, newest first"),
      h(
        "thead",
        {},
        h("tr", {}, ...["Started", "Preset", "With", "Places, round by round (points)", "Points", "Result", "Replay"].map((title) => h("th", { scope: "col" }, title))),
      ),
      h("tbody", {}, ...games.map((game) => gameRow(game, names))),
    ),
  );
}

function headToHeadForm(opponents: Map<string, string>): HTMLElement {
  const choose = h("select", { id: "h2h-opponent" }, ...[...opponents].map(([id, name]) => h("option", { value: id }, name)));
  const answer = h("p", { id: "h2h-result", role: "status" });
  const form = h(
    "form",
    { id: "h2h", class: "card-panel", "aria-labelledby": "h2h-title" },
    h("h2", { id: "h2h-title" }, "Head to head"),
    opponents.size === 0
      ? h("p", {}, "Once you have played with someone, choose them here to see who finished ahead more often.")
      : h("div", {}, h("label", { for: "h2h-opponent" }, "Opponent"), choose, h("button", { type: "submit" }, "Compare")),
    answer,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const name = opponents.get(choose.value) ?? choose.value;
    gateway
      .getHeadToHead({ opponentId: choose.value })
      .then((found) => {
        answer.textContent =
          `Against ${name}: ${found.games} game(s) together; you ended ahead in ${found.gamesAhead}, behind in ${found.gamesBehind}, level in ${found.gamesLevel}. ` +
          `Of ${found.rounds} round(s), you finished ahead in ${found.roundsAhead} and behind in ${found.roundsBehind}.`;
      })
      .catch((error: unknown) => {
        answer.textContent = `The head-to-head is not available: ${sentence(error)}`;
      });
  });
  return form;
}

export async function showProfile(back: () => void, leaderboards: () => void): Promise<void> {
  const status = h("p", { id: "profile-status", role: "status" }, "Asking the server for your games…");
  const body = h("div", { id: "profile-body" });
  fill(
    byId("main"),
    h(
      "header",
      { class: "bar" },
      h("h1", {}, `${identity.name}: your profile`),
      h("button", { onclick: back }, "Lobby"),
      h("button", { onclick: leaderboards }, "Leaderboards"),
    ),
    status,
    body,
  );
  try {
    const answer = await gateway.getHistory({ pageSize: 50 });
    const history = answer.history;
    const totals = history?.totals;
    const names = answer.displayNames;
    const opponents = new Map<string, string>();
    for (const game of history?.games ?? []) for (const id of game.others) if (!id.startsWith("bot:")) opponents.set(id, names[id] || id);
    fill(
      body,
      h(
        "section",
        { class: "card-panel", "aria-labelledby": "ratings-title" },
        h("h2", { id: "ratings-title" }, "Your ratings"),
        ratingsList(history?.ratings ?? []),
        totals
          ? h(
              "p",
              { id: "totals" },
              `${totals.games} game(s), ${totals.rounds} round(s) finished; average place ${totals.averagePlace.toFixed(2)}; best run of firsts ${totals.bestStreak}.`,
            )
          : null,
      ),
      h("section", { class: "card-panel", "aria-labelledby": "history-title" }, h("h2", { id: "history-title" }, "History"), historyTable(history?.games ?? [], names)),
      headToHeadForm(opponents),
    );
    status.textContent =
      (history?.games.length ?? 0) === 0 && !totals?.rounds
        ? "You have not finished a round yet: your ratings and games show here once you have."
        : "";
  } catch (error) {
    status.textContent = `Your profile is not available: ${sentence(error)}`;
  }
  document.body.dataset.ready = "profile";
}
